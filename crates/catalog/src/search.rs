//! Ranked lookup over the catalog: BM25 with weighted fields (a title word counts more than a
//! body word) over normalised words and concepts. Used by `mldebug search` (entries) and
//! `mldebug triage` (symptom rows).
//!
//! A text becomes terms in three stages, each linear in its length: [`text`] normalises words
//! (numbers to classes, identifiers split, a light stemmer), [`typo`] replaces a query word the
//! index does not know by its nearest known word, and [`concepts`] marks the ideas behind
//! phrases ("val loss increasing" and "validation loss goes up" both mark `@valrise`).

pub mod concepts;
mod numbers;
mod slot;
pub mod text;
pub mod typo;

use super::error::{Error, Result};
use super::model::Catalog;
use std::collections::HashMap;
use std::sync::OnceLock;

pub use text::stem;

/// BM25 term-frequency saturation; 1.2 is the usual default (Robertson & Zaragoza 2009).
const K1: f64 = 1.2;
/// BM25 length normalisation; 0.75 is the usual default.
const B: f64 = 0.75;
/// A word a concept adds to the query counts for less than the word typed.
const ALSO_WEIGHT: f64 = 0.5;
/// A corrected typo counts for a little less than a word spelled right.
const TYPO_WEIGHT: f64 = 0.8;
/// A number as written (not a class such as `zero` or `tiny`) rarely names a problem.
const NUMBER_WEIGHT: f64 = 0.3;
/// Field weights for entries: a title word counts three body words, a tag two.
pub const ENTRY_TITLE_WEIGHT: f64 = 3.0;
/// Field weight of an entry's tags.
pub const ENTRY_TAG_WEIGHT: f64 = 2.0;
/// Field weight of the symptom text over its hypotheses in triage.
pub const SYMPTOM_WEIGHT: f64 = 3.0;
/// The weight of the words people used for a row, beside the row's own (weight 1 for its
/// hypotheses): each phrasing is one person's wording, so together they count for less than
/// the row's, and a word many of them share still adds up. Chosen on held-out set 6 with the
/// others indexed (0.25: 86.7% top-1, 0.5: 89.2%, 1: 89.2%, 2: 85.8%), then measured on sets
/// 7 and 8, which were never indexed (tests/it/triage_bench.rs).
pub const PHRASING_WEIGHT: f64 = 0.5;
/// The longest query read, in words: far beyond any description of a symptom, and a bound on
/// time and memory (a query is read in linear time; 100,000 words take well under a second).
pub const MAX_QUERY_WORDS: usize = 200_000;

/// The terms of a document's text: its normalised words (minus those a phrase replaced) and
/// the concepts marked in it.
pub fn tokens(text: &str) -> Vec<String> {
    concepts::annotate(&text::words(text))
        .into_iter()
        .flatten()
        .collect()
}

/// How a query is echoed in a message: control characters escaped, at most
/// [`ECHO_CHARS`] characters, the rest elided.
pub fn echo(query: &str) -> String {
    let mut out = String::new();
    for (n, c) in query.chars().enumerate() {
        if n == ECHO_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The longest query echoed whole in a message.
pub const ECHO_CHARS: usize = 80;

/// A query longer than [`MAX_QUERY_WORDS`] words is refused as bad input (exit code 2).
pub fn check_query_length(query: &str) -> Result<()> {
    let n = query.split_whitespace().take(MAX_QUERY_WORDS + 1).count();
    if n > MAX_QUERY_WORDS {
        return Err(Error::usage(format!(
            "the query has more than {MAX_QUERY_WORDS} words; describe the symptom in fewer words, or paste only the lines around the error"
        )));
    }
    Ok(())
}

/// One unit of meaning in a query, with term weights: a word with the concepts marked on it,
/// or a phrase with its words and concepts. A group scores by its best-matching term, so a
/// word and the concept it names do not count twice.
pub type Group = Vec<(String, f64)>;

/// A BM25F index over documents made of weighted fields: each field's term counts are
/// normalised by that field's length against the average length of the same field, weighted,
/// summed, and only then saturated (Robertson, Zaragoza & Taylor 2004). A long hypotheses cell
/// therefore does not dilute a match in a short symptom cell.
#[derive(Debug, Clone, Default)]
pub struct Index {
    /// Per document, per field: term counts and length.
    docs: Vec<Vec<Field>>,
    /// Per field position: its weight and average length.
    weights: Vec<f64>,
    avg_len: Vec<f64>,
    doc_freq: HashMap<String, usize>,
    speller: OnceLock<typo::Speller>,
}

#[derive(Debug, Clone, Default)]
struct Field {
    tf: HashMap<String, f64>,
    len: f64,
}

impl Index {
    /// Build from documents, each a list of (field text, field weight); the i-th field of every
    /// document shares the weight given first for that position.
    pub fn new<'a>(docs: impl IntoIterator<Item = Vec<(&'a str, f64)>>) -> Self {
        let mut index = Index::default();
        for fields in docs {
            let mut doc = Vec::with_capacity(fields.len());
            let mut seen = std::collections::HashSet::new();
            for (k, (text, weight)) in fields.into_iter().enumerate() {
                if index.weights.len() <= k {
                    index.weights.push(weight);
                    index.avg_len.push(0.0);
                }
                let mut field = Field::default();
                for t in tokens(text) {
                    *field.tf.entry(t).or_default() += 1.0;
                    field.len += 1.0;
                }
                index.avg_len[k] += field.len;
                seen.extend(field.tf.keys().cloned());
                doc.push(field);
            }
            for t in seen {
                *index.doc_freq.entry(t).or_default() += 1;
            }
            index.docs.push(doc);
        }
        let n = index.docs.len().max(1) as f64;
        index.avg_len.iter_mut().for_each(|a| *a /= n);
        index
    }

    fn idf(&self, term: &str) -> Option<f64> {
        let n = self.docs.len() as f64;
        let df = *self.doc_freq.get(term)? as f64;
        Some((1.0 + (n - df + 0.5) / (df + 0.5)).ln())
    }

    /// The BM25F score of one term in document `doc`, before the query weight and idf.
    fn term_score(&self, doc: usize, term: &str) -> f64 {
        let mut tf = 0.0;
        for (k, field) in self.docs[doc].iter().enumerate() {
            if let Some(f) = field.tf.get(term) {
                let norm = 1.0 - B + B * field.len / self.avg_len[k].max(1e-9);
                tf += self.weights[k] * f / norm;
            }
        }
        tf * (K1 + 1.0) / (tf + K1)
    }

    /// The spelling vocabulary: the documents' words and the concepts' words.
    fn speller(&self) -> &typo::Speller {
        self.speller.get_or_init(|| {
            let words = self
                .doc_freq
                .iter()
                .filter(|(t, _)| !t.starts_with(concepts::PREFIX))
                .map(|(t, f)| (t.clone(), *f))
                .chain(concepts::vocabulary().iter().map(|w| (w.clone(), 0)));
            typo::Speller::new(words)
        })
    }

    /// Whether `word` is known to the index or to a concept.
    fn knows(&self, word: &str) -> bool {
        self.doc_freq.contains_key(word)
            || concepts::vocabulary()
                .binary_search_by(|v| v.as_str().cmp(word))
                .is_ok()
    }

    /// The query's meaning units ([`Group`]s): each word as typed (or corrected) with the
    /// concepts marked on it, each phrase with its concepts, and the words concepts add. Linear
    /// in the query's length: each distinct word is corrected once, repeated groups merge.
    pub fn query_groups(&self, query: &str) -> Vec<Group> {
        let mut corrections: HashMap<String, Option<String>> = HashMap::new();
        let mut corrected = std::collections::HashSet::new();
        let words: Vec<String> = text::words(query)
            .into_iter()
            .map(|w| {
                if self.knows(&w) {
                    return w;
                }
                let fix = corrections
                    .entry(w.clone())
                    .or_insert_with(|| self.speller().correct(&w).map(str::to_string));
                match fix {
                    Some(f) => {
                        corrected.insert(f.clone());
                        f.clone()
                    }
                    None => w,
                }
            })
            .collect();
        let mut out: Vec<Group> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut push = |g: Group| {
            let key: Vec<&str> = g.iter().map(|(t, _)| t.as_str()).collect();
            if seen.insert(key.join(" ")) {
                out.push(g);
            }
        };
        for slot in concepts::annotate(&words) {
            let mut group = Group::new();
            for t in &slot {
                let weight = if corrected.contains(t) {
                    TYPO_WEIGHT
                } else if t.starts_with(|c: char| c.is_ascii_digit()) {
                    NUMBER_WEIGHT
                } else {
                    1.0
                };
                group.push((t.clone(), weight));
                for w in concepts::also(t) {
                    push(vec![(w.clone(), ALSO_WEIGHT)]);
                }
            }
            push(group);
        }
        out
    }

    /// Every term of the query with its weight (the groups flattened).
    pub fn query_terms(&self, query: &str) -> Vec<(String, f64)> {
        self.query_groups(query).into_iter().flatten().collect()
    }

    /// The groups that can score (terms some document holds), each term with weight × idf.
    fn scoring_groups(&self, query: &str) -> Vec<Group> {
        self.query_groups(query)
            .into_iter()
            .map(|g| {
                g.into_iter()
                    .filter_map(|(t, w)| Some((w * self.idf(&t)?, t)))
                    .map(|(w, t)| (t, w))
                    .collect::<Group>()
            })
            .filter(|g| !g.is_empty())
            .collect()
    }

    /// A group's score in `doc`: its best term's, and that term.
    fn group_score<'g>(&self, doc: usize, group: &'g Group) -> (f64, &'g str) {
        group
            .iter()
            .map(|(t, w)| (w * self.term_score(doc, t), t.as_str()))
            .fold((0.0, ""), |best, x| if x.0 > best.0 { x } else { best })
    }

    /// What document `doc`'s score rests on: each group's best term and its score, largest first.
    pub fn explain(&self, query: &str, doc: usize) -> Vec<(String, f64)> {
        if doc >= self.docs.len() {
            return Vec::new();
        }
        let mut out: Vec<(String, f64)> = self
            .scoring_groups(query)
            .iter()
            .map(|g| self.group_score(doc, g))
            .filter(|(s, _)| *s > 0.0)
            .map(|(s, t)| (t.to_string(), s))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }

    /// Documents scoring above zero for `query`, best first: (document index, score).
    /// Ties keep document order, so results are deterministic.
    pub fn search(&self, query: &str) -> Vec<(usize, f64)> {
        let groups = self.scoring_groups(query);
        let mut scored: Vec<(usize, f64)> = (0..self.docs.len())
            .map(|i| {
                let score = groups.iter().map(|g| self.group_score(i, g).0).sum::<f64>();
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

/// The symptom rows' index: the symptom, its hypotheses, and how people describe it (the
/// catalog's phrasings; document i = `c.symptoms[i]`).
pub fn symptom_index(c: &Catalog) -> Index {
    symptom_index_with(c, |_| true)
}

/// [`symptom_index`] with only the phrasings `keep` accepts (a set held out to be measured).
pub fn symptom_index_with(c: &Catalog, keep: impl Fn(&crate::model::Phrasing) -> bool) -> Index {
    let texts: Vec<(String, String, String)> = c
        .symptoms
        .iter()
        .map(|s| {
            let said: Vec<&str> = c
                .phrasings
                .iter()
                .filter(|p| p.id == s.id && keep(p))
                .map(|p| p.text.as_str())
                .collect();
            (s.symptom.clone(), s.hypotheses.join(" "), said.join(" \n "))
        })
        .collect();
    Index::new(texts.iter().map(|(s, h, p)| {
        vec![
            (s.as_str(), SYMPTOM_WEIGHT),
            (h.as_str(), 1.0),
            (p.as_str(), PHRASING_WEIGHT),
        ]
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(idx: &Index, q: &str) -> Vec<String> {
        idx.query_terms(q).into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn concepts_join_nan_inf_and_zero_0() {
        let idx = Index::new([vec![("loss goes to inf", 1.0)], vec![("loss is 0", 1.0)]]);
        assert!(terms(&idx, "loss is NaN").contains(&"@nonfinite".to_string()));
        assert_eq!(idx.search("loss is NaN")[0].0, 0);
        assert_eq!(idx.search("loss is zero")[0].0, 1);
        assert_eq!(idx.search("loss: 0.000")[0].0, 1);
    }

    #[test]
    fn echo_is_short_and_escaped() {
        assert_eq!(echo("loss\u{1b}[31m nan"), "loss\\u{1b}[31m nan");
        let long = "word ".repeat(100);
        let e = echo(&long);
        assert_eq!(e.chars().count(), ECHO_CHARS + 1);
        assert!(e.ends_with('…'));
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
    fn the_word_typed_ranks_above_its_concept_kin() {
        let idx = Index::new([vec![("loss goes to inf", 1.0)], vec![("loss is nan", 1.0)]]);
        let hits = idx.search("nan");
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].0, 1);
    }

    #[test]
    fn typos_are_corrected_against_the_index() {
        let idx = Index::new([vec![("gradients vanish", 1.0)], vec![("memory grows", 1.0)]]);
        assert_eq!(idx.search("gradeints vanishh")[0].0, 0);
        let t = idx.query_terms("memroy");
        assert!(t.contains(&("memory".to_string(), TYPO_WEIGHT)), "{t:?}");
        assert!(idx.search("zzzzzz qqqqqq").is_empty());
    }

    #[test]
    fn a_memory_leak_is_not_a_data_leak() {
        let idx = Index::new([
            vec![("A batch leak: one sample sees another", 3.0)],
            vec![("Memory grows every step", 3.0)],
        ]);
        assert_eq!(idx.search("memory leak")[0].0, 1);
        assert_eq!(idx.search("label leak")[0].0, 0);
    }

    /// Every stage is linear: four times the words (distinct unknown words, each a typo
    /// candidate, or repeated catalog words) must cost well under the sixteen times a quadratic
    /// stage would. A ratio, so a slow or busy machine does not decide it.
    #[test]
    fn a_huge_query_is_linear() {
        let idx = Index::new([vec![("loss is nan", 3.0)], vec![("memory grows", 3.0)]]);
        let distinct = |n: usize| {
            let mut state = 1u64;
            let mut q = String::new();
            for _ in 0..n {
                for _ in 0..7 {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    q.push((b'a' + (state >> 59) as u8 % 26) as char);
                }
                q.push(' ');
            }
            q
        };
        let repeated = |n: usize| "my loss went nan and memory keeps growing ".repeat(n / 7);
        let time = |q: &str| {
            let t = std::time::Instant::now();
            let _ = idx.search(q);
            t.elapsed()
        };
        for make in [&distinct as &dyn Fn(usize) -> String, &repeated] {
            let (small, large) = (time(&make(25_000)), time(&make(100_000)));
            assert!(
                large < small * 8 + std::time::Duration::from_millis(500),
                "25,000 words {small:?}, 100,000 words {large:?}"
            );
        }
    }
}
