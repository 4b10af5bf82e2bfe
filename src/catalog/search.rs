//! Ranked lookup over the catalog: BM25 with weighted fields (a title word counts more than a
//! body word), a light stemmer, and synonym expansion so "nan" finds "inf" and "diverge" and
//! "0" finds "zero". Used by `mldebug search` (entries) and `mldebug triage` (symptom rows).

use super::model::Catalog;
use std::collections::HashMap;

/// BM25 term-frequency saturation; 1.2 is the usual default (Robertson & Zaragoza 2009).
const K1: f64 = 1.2;
/// BM25 length normalisation; 0.75 is the usual default.
const B: f64 = 0.75;
/// A synonym counts for less than the word typed.
const SYNONYM_WEIGHT: f64 = 0.5;
/// Field weights for entries: a title word counts three body words, a tag two.
pub const ENTRY_TITLE_WEIGHT: f64 = 3.0;
pub const ENTRY_TAG_WEIGHT: f64 = 2.0;
/// Field weight of the symptom text over its hypotheses in triage.
pub const SYMPTOM_WEIGHT: f64 = 3.0;

/// Words too common to rank by.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "do", "does", "for", "from", "has",
    "have", "i", "if", "in", "into", "is", "it", "its", "my", "not", "of", "on", "or", "so",
    "that", "the", "then", "there", "this", "to", "was", "were", "what", "when", "which", "why",
    "with", "you", "your", "after", "get", "gets", "got", "me", "we",
];

/// Groups of words that mean the same thing to someone describing a training problem.
const SYNONYMS: &[&[&str]] = &[
    &[
        "nan",
        "inf",
        "infinite",
        "infinity",
        "nonfinite",
        "diverge",
        "explode",
        "overflow",
        "blow",
    ],
    &["zero", "0"],
    &["flat", "plateau", "stuck", "stall", "constant", "unchanged"],
    &["mask", "padding", "pad", "ignore"],
    &["leak", "leakage", "cheat", "future", "peek"],
    &["memory", "oom"],
    &["imbalance", "imbalanced", "majority", "skew"],
    &["gradient", "grad"],
    &["accuracy", "acc"],
    &["seed", "random", "luck", "lucky"],
    &["slow", "slowly"],
    &["high", "large", "big", "huge"],
    &["low", "small", "tiny"],
    &[
        "init",
        "initialization",
        "initialisation",
        "initial",
        "start",
    ],
    &["fine", "finetune", "finetuning"],
];

/// Lower-case words of `text`, stop words dropped, lightly stemmed.
pub fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect()
}

/// A deliberately small stemmer: plural and verb endings, then a final `e`
/// (diverge, diverges, diverged, diverging → diverg).
pub fn stem(w: &str) -> String {
    let mut s = w.to_string();
    if s.chars().any(|c| !c.is_ascii_alphabetic()) {
        return s;
    }
    for suffix in ["ing", "ed", "es", "s"] {
        if s.len() > suffix.len() + 2 && s.ends_with(suffix) && !s.ends_with("ss") {
            s.truncate(s.len() - suffix.len());
            break;
        }
    }
    if s.len() > 3 && s.ends_with('e') {
        s.pop();
    }
    s
}

/// The query's terms with weights: each word typed (1.0) and its synonyms.
pub fn expand(query: &str) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Vec::new();
    let mut add = |t: String, w: f64| match out.iter_mut().find(|(x, _)| *x == t) {
        Some((_, old)) => *old = old.max(w),
        None => out.push((t, w)),
    };
    for t in tokens(query) {
        add(t.clone(), 1.0);
        for group in SYNONYMS {
            if group.iter().any(|g| stem(g) == t) {
                for g in group.iter() {
                    add(stem(g), SYNONYM_WEIGHT);
                }
            }
        }
    }
    out
}

/// A BM25 index over documents made of weighted fields.
#[derive(Debug, Clone, Default)]
pub struct Index {
    docs: Vec<HashMap<String, f64>>,
    lengths: Vec<f64>,
    doc_freq: HashMap<String, usize>,
    avg_len: f64,
}

impl Index {
    /// Build from documents, each a list of (field text, field weight).
    pub fn new<'a>(docs: impl IntoIterator<Item = Vec<(&'a str, f64)>>) -> Self {
        let mut index = Index::default();
        for fields in docs {
            let mut tf: HashMap<String, f64> = HashMap::new();
            let mut len = 0.0;
            for (text, weight) in fields {
                for t in tokens(text) {
                    *tf.entry(t).or_default() += weight;
                    len += weight;
                }
            }
            for t in tf.keys() {
                *index.doc_freq.entry(t.clone()).or_default() += 1;
            }
            index.docs.push(tf);
            index.lengths.push(len);
        }
        let n = index.docs.len().max(1) as f64;
        index.avg_len = index.lengths.iter().sum::<f64>() / n;
        index
    }

    /// Documents scoring above zero for `query`, best first: (document index, score).
    /// Ties keep document order, so results are deterministic.
    pub fn search(&self, query: &str) -> Vec<(usize, f64)> {
        let terms = expand(query);
        let n = self.docs.len() as f64;
        let mut scored: Vec<(usize, f64)> = self
            .docs
            .iter()
            .enumerate()
            .map(|(i, tf)| {
                let norm = K1 * (1.0 - B + B * self.lengths[i] / self.avg_len.max(1e-9));
                let score = terms
                    .iter()
                    .filter_map(|(t, w)| {
                        let f = *tf.get(t)?;
                        let df = *self.doc_freq.get(t)? as f64;
                        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                        Some(w * idf * f * (K1 + 1.0) / (f + norm))
                    })
                    .sum::<f64>();
                (i, score)
            })
            .filter(|(_, s)| *s > 0.0)
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored
    }
}

/// The entries' index: title, body, quotes and tags (document i = `c.entries[i]`).
pub fn entry_index(c: &Catalog) -> Index {
    let texts: Vec<(String, String, String, String)> = c
        .entries
        .iter()
        .map(|e| {
            let quotes: Vec<&str> = e
                .quotes
                .iter()
                .map(|&i| c.quotes[i].text.as_str())
                .collect();
            (
                e.title.clone(),
                e.body.clone(),
                quotes.join(" "),
                e.tags.join(" ").replace('-', " "),
            )
        })
        .collect();
    Index::new(texts.iter().map(|(title, body, quotes, tags)| {
        vec![
            (title.as_str(), ENTRY_TITLE_WEIGHT),
            (body.as_str(), 1.0),
            (quotes.as_str(), 1.0),
            (tags.as_str(), ENTRY_TAG_WEIGHT),
        ]
    }))
}

/// The symptom rows' index: the symptom and its hypotheses (document i = `c.symptoms[i]`).
pub fn symptom_index(c: &Catalog) -> Index {
    let texts: Vec<(String, String)> = c
        .symptoms
        .iter()
        .map(|s| (s.symptom.clone(), s.hypotheses.join(" ")))
        .collect();
    Index::new(
        texts
            .iter()
            .map(|(s, h)| vec![(s.as_str(), SYMPTOM_WEIGHT), (h.as_str(), 1.0)]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stemming_joins_word_forms() {
        for w in ["diverge", "diverges", "diverged", "diverging"] {
            assert_eq!(stem(w), "diverg", "{w}");
        }
        assert_eq!(stem("loss"), "loss");
        assert_eq!(stem("nans"), "nan");
        assert_eq!(stem("0"), "0");
    }

    #[test]
    fn synonyms_expand_nan_and_zero() {
        let q: Vec<String> = expand("loss is NaN").into_iter().map(|(t, _)| t).collect();
        assert!(
            q.contains(&"inf".to_string()) && q.contains(&"diverg".to_string()),
            "{q:?}"
        );
        let q: Vec<String> = expand("loss is 0").into_iter().map(|(t, _)| t).collect();
        assert!(q.contains(&"zero".to_string()), "{q:?}");
    }

    #[test]
    fn title_words_rank_higher() {
        let idx = Index::new([
            vec![("other", 3.0), ("overfit a batch", 1.0)],
            vec![("overfit", 3.0), ("a batch", 1.0)],
            vec![("unrelated", 3.0), ("words", 1.0)],
        ]);
        let hits = idx.search("overfit");
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].0, 1);
    }

    #[test]
    fn synonyms_find_but_rank_below_the_word() {
        let idx = Index::new([vec![("loss goes to inf", 1.0)], vec![("loss is nan", 1.0)]]);
        let hits = idx.search("nan");
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].0, 1);
    }
}
