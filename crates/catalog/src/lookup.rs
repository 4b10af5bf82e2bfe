//! Finding things in the catalog by what a person types: quotes by author or source, ids with
//! "did you mean" suggestions (edit distance). Pure functions over a [`Catalog`].

use super::model::{Catalog, Excerpt, QuoteStatus, Source};
pub use mldebug_text::suggest::{edit_distance, SUGGEST_MAX_EDITS};
use serde::Serialize;
/// At most this many suggestions.
pub const SUGGEST_MAX: usize = 5;

/// One quote as shown by `quote`, `show` and `search`: the excerpt with its source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuoteHit {
    /// The excerpt id.
    pub id: String,
    /// The quoted words, exact.
    pub text: String,
    /// Who wrote them.
    pub author: String,
    /// The source's title.
    pub title: String,
    /// Where to read it.
    pub url: String,
    /// When it was published.
    pub date: String,
    /// The source id (the footnote label and evidence file name).
    pub source: String,
    /// Whether the words were checked against the source.
    pub status: QuoteStatus,
    /// What differed, or what the check could not see.
    pub note: String,
    /// The topics it is filed under.
    pub topics: Vec<String>,
    /// Entries that quote it (`mldebug show <entry>`).
    pub entries: Vec<String>,
}

impl QuoteHit {
    /// The excerpt `x` of source `s`, with the entries of `c` that quote it.
    pub fn new(c: &Catalog, s: &Source, x: &Excerpt) -> Self {
        QuoteHit {
            id: x.id.clone(),
            text: x.text.clone(),
            author: s.author.clone(),
            title: s.title.clone(),
            url: s.url.clone(),
            date: s.date.clone(),
            source: s.id.clone(),
            status: x.status,
            note: x.note.clone(),
            topics: x.topics.clone(),
            entries: c
                .entries_quoting(&x.id)
                .into_iter()
                .map(String::from)
                .collect(),
        }
    }
}

/// Why `quotes` found nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum NoQuotes {
    /// No author or source matches `who`.
    UnknownWho {
        /// Close names.
        suggestions: Vec<String>,
    },
    /// `who` matched, but none of their quotes has the topic.
    NoTopic {
        /// The topics they do have.
        topics: Vec<String>,
    },
}

/// Does `who` name this source (its id, an id prefix, or a word of the author's name)?
pub fn source_matches(s: &Source, who: &str) -> bool {
    let who = who.trim().to_lowercase();
    if who.is_empty() {
        return false;
    }
    let id = s.id.to_lowercase();
    let author = s.author.to_lowercase();
    id == who
        || id.starts_with(&format!("{who}-"))
        || author == who
        || author
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| w == who)
        || (who.contains(' ') && author.contains(&who))
}

/// Does `topic` name one of the excerpt's topics (or a hyphen-separated part of one), or a tag of
/// an entry quoting it?
pub fn topic_matches(c: &Catalog, x: &Excerpt, topic: &str) -> bool {
    let topic = topic.trim().to_lowercase();
    let hit = |t: &str| {
        let t = t.to_lowercase();
        t == topic || t.split('-').any(|p| p == topic)
    };
    x.topics.iter().any(|t| hit(t))
        || c.entries_quoting(&x.id)
            .iter()
            .filter_map(|id| c.entry(id))
            .any(|e| e.tags.iter().any(|t| hit(t)))
}

/// Every quote whose source matches `who` (or whose excerpt id is `who`), optionally only those
/// on `topic`, in catalog order.
pub fn quotes(c: &Catalog, who: &str, topic: Option<&str>) -> Result<Vec<QuoteHit>, NoQuotes> {
    let by_excerpt: Vec<QuoteHit> = c
        .excerpt(who.trim())
        .map(|(s, x)| vec![QuoteHit::new(c, s, x)])
        .unwrap_or_default();
    let mut pairs: Vec<(&Source, &Excerpt)> = c
        .sources
        .iter()
        .filter(|s| source_matches(s, who))
        .flat_map(|s| s.excerpts.iter().map(move |x| (s, x)))
        .collect();
    if pairs.is_empty() {
        if !by_excerpt.is_empty() {
            return Ok(by_excerpt);
        }
        return Err(NoQuotes::UnknownWho {
            suggestions: suggest(who, &names(c)),
        });
    }
    if let Some(topic) = topic {
        let all_topics = {
            let mut t: Vec<String> = pairs
                .iter()
                .flat_map(|(_, x)| x.topics.iter().cloned())
                .collect();
            t.sort();
            t.dedup();
            t
        };
        pairs.retain(|(_, x)| topic_matches(c, x, topic));
        if pairs.is_empty() {
            return Err(NoQuotes::NoTopic { topics: all_topics });
        }
    }
    Ok(pairs
        .into_iter()
        .map(|(s, x)| QuoteHit::new(c, s, x))
        .collect())
}

/// The names `quote` answers to: authors' words, source ids and their first part.
pub fn names(c: &Catalog) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in &c.sources {
        out.push(s.id.clone());
        if let Some(first) = s.id.split('-').next() {
            out.push(first.to_string());
        }
        out.extend(
            s.author
                .split(|ch: char| !ch.is_alphanumeric())
                .filter(|w| w.len() > 2 && w.chars().next().is_some_and(char::is_uppercase))
                .map(str::to_lowercase),
        );
    }
    out.sort();
    out.dedup();
    out
}

/// Candidates within [`SUGGEST_MAX_EDITS`] edits of `input` (case-insensitive), closest first.
pub fn suggest(input: &str, candidates: &[String]) -> Vec<String> {
    let input = input.trim().to_lowercase();
    let mut scored: Vec<(usize, &String)> = candidates
        .iter()
        .map(|c| (edit_distance(&input, &c.to_lowercase()), c))
        .filter(|(d, _)| *d <= SUGGEST_MAX_EDITS)
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(SUGGEST_MAX)
        .map(|(_, c)| c.clone())
        .collect()
}

/// Every id `show` answers to: entries, sources, checks and excerpts.
pub fn all_ids(c: &Catalog) -> Vec<String> {
    let mut ids: Vec<String> = c.entries.iter().map(|e| e.id.clone()).collect();
    ids.extend(c.sources.iter().map(|s| s.id.clone()));
    ids.extend(c.checks.iter().map(|k| k.id.to_string()));
    ids.extend(
        c.sources
            .iter()
            .flat_map(|s| s.excerpts.iter().map(|x| x.id.clone())),
    );
    ids
}

/// The item `quote --random --seed N` shows: the workspace's one generator
/// ([`mldebug_text::rng::Rng`]) seeded with N.
pub fn pick(len: usize, seed: u64) -> usize {
    mldebug_text::rng::Rng::new(seed).index(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_close_names_only() {
        let names = vec![
            "rahtz".to_string(),
            "karpathy".to_string(),
            "bekman".to_string(),
        ];
        assert_eq!(suggest("Rahts", &names), ["rahtz"]);
        assert!(suggest("zzzzzz", &names).is_empty());
    }

    #[test]
    fn pick_is_deterministic_and_in_range() {
        assert_eq!(pick(7, 42), pick(7, 42));
        assert!((0..100).all(|s| pick(3, s) < 3));
        assert_ne!((0..20).map(|s| pick(5, s)).collect::<Vec<_>>(), vec![0; 20]);
    }
}
