//! Typo tolerance: a word the index does not know is replaced by the nearest word it does know,
//! within one edit for words of 5 to 7 letters and two edits from 8 letters on (an edit inserts,
//! deletes or substitutes a letter, or swaps two neighbours: "gradeints" → "gradients"). The
//! first letter must agree: people rarely mistype it, and a real word the index lacks
//! ("reference") should not become a known one ("inference").
//!
//! Lookup is by symmetric deletion: every known word is stored under each string obtained by
//! deleting up to [`MAX_EDITS`] of its letters, so a query word costs a few dozen hash lookups
//! whatever the size of the vocabulary.

use mldebug_text::suggest::edit_distance;
use std::collections::{HashMap, HashSet};

/// The most edits ever allowed.
pub const MAX_EDITS: usize = 2;
/// Shorter words are never corrected: too many neighbours.
pub const MIN_LEN: usize = 5;

/// Edits allowed for a word of `len` letters.
pub fn max_edits(len: usize) -> usize {
    match len {
        0..MIN_LEN => 0,
        MIN_LEN..=7 => 1,
        _ => MAX_EDITS,
    }
}

/// Corrects words one or two edits away from the indexed vocabulary.
#[derive(Debug, Clone, Default)]
pub struct Speller {
    words: Vec<String>,
    /// How many documents hold each word; the more common of two equally near words wins.
    freq: Vec<usize>,
    deletes: HashMap<String, Vec<u32>>,
    /// The longest known word: a word longer by more than the edits allowed has no neighbour,
    /// and is not worth the (quadratic) deletions.
    longest: usize,
}

impl Speller {
    /// From (word, document frequency); words that are not plain ASCII letters are left out.
    pub fn new(vocabulary: impl IntoIterator<Item = (String, usize)>) -> Self {
        let mut s = Speller::default();
        let mut seen = HashSet::new();
        for (w, f) in vocabulary {
            if w.len() < MIN_LEN - 1 || !w.bytes().all(|b| b.is_ascii_lowercase()) {
                continue;
            }
            if !seen.insert(w.clone()) {
                continue;
            }
            let id = s.words.len() as u32;
            for d in deletions(&w, MAX_EDITS) {
                s.deletes.entry(d).or_default().push(id);
            }
            s.longest = s.longest.max(w.len());
            s.words.push(w);
            s.freq.push(f);
        }
        s
    }

    /// The nearest known word to `w` within [`max_edits`], or `None` when `w` is short, not a
    /// plain word, or has no neighbour close enough. Ties go to the more common word, then the
    /// alphabetically first.
    pub fn correct(&self, w: &str) -> Option<&str> {
        let limit = max_edits(w.len());
        if !self.worth_expanding(w, limit) {
            return None;
        }
        let mut best: Option<(usize, usize, &str)> = None;
        let mut tried = HashSet::new();
        for d in deletions(w, limit) {
            for &id in self.deletes.get(&d).into_iter().flatten() {
                if !tried.insert(id) {
                    continue;
                }
                let cand = self.words[id as usize].as_str();
                if cand.as_bytes()[0] != w.as_bytes()[0] {
                    continue;
                }
                let dist = edit_distance(w, cand);
                if dist == 0 || dist > limit {
                    continue;
                }
                let key = (dist, usize::MAX - self.freq[id as usize], cand);
                if best.is_none_or(|b| key < b) {
                    best = Some(key);
                }
            }
        }
        best.map(|(_, _, w)| w)
    }

    /// Whether `w` could be within `limit` edits of a known word at all: a plain lowercase word,
    /// not longer than the longest known word by more than `limit` letters. Its deletions are
    /// quadratic in its length, so a long word is refused before they are made.
    fn worth_expanding(&self, w: &str, limit: usize) -> bool {
        limit > 0 && w.len() <= self.longest + limit && w.bytes().all(|b| b.is_ascii_lowercase())
    }
}

/// `w` and every string made from it by deleting up to `edits` letters (ASCII).
fn deletions(w: &str, edits: usize) -> Vec<String> {
    let mut out = vec![w.to_string()];
    let mut frontier = vec![w.to_string()];
    for _ in 0..edits {
        let mut next = Vec::new();
        for s in &frontier {
            for i in 0..s.len() {
                let mut d = s.clone();
                d.remove(i);
                next.push(d);
            }
        }
        next.sort();
        next.dedup();
        out.extend(next.iter().cloned());
        frontier = next;
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn speller(words: &[&str]) -> Speller {
        Speller::new(words.iter().map(|w| (w.to_string(), 1)))
    }

    #[test]
    fn a_word_far_longer_than_any_known_one_is_not_expanded() {
        let s = Speller::new([("gradient".to_string(), 1)]);
        // Within reach of the longest word: still corrected.
        assert_eq!(s.correct("gradienta"), Some("gradient"));
        assert!(s.worth_expanding("gradientab", 2));
        // Beyond it (a fuzzer found 180 letters taking over a second per query): refused before
        // any deletion is made — 20,000 letters would be 200 million deletion strings.
        assert!(!s.worth_expanding("gradientabc", 2));
        assert!(!s.worth_expanding(&"g".repeat(20_000), 2));
        assert_eq!(s.correct(&"g".repeat(20_000)), None);
    }

    #[test]
    fn the_shared_distance_counts_swaps_as_one() {
        assert_eq!(edit_distance("gradeint", "gradient"), 1);
        assert_eq!(edit_distance("memroy", "memory"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn corrects_within_the_length_limit() {
        let s = speller(&["gradient", "memory", "plateau", "loss", "overfit"]);
        assert_eq!(s.correct("gradeint"), Some("gradient"));
        assert_eq!(s.correct("graident"), Some("gradient"));
        assert_eq!(s.correct("memroy"), Some("memory"));
        assert_eq!(s.correct("plataeu"), Some("plateau"));
        assert_eq!(s.correct("ovrfit"), Some("overfit"));
        assert_eq!(s.correct("los"), None, "short words are left alone");
        assert_eq!(s.correct("mmry"), None);
        assert_eq!(s.correct("banana"), None);
        assert_eq!(s.correct("memory"), None, "a known word is not a typo");
        let s = speller(&["inference"]);
        assert_eq!(s.correct("reference"), None, "the first letter must agree");
    }

    #[test]
    fn ties_go_to_the_common_word() {
        let s = Speller::new([("stall".to_string(), 1), ("small".to_string(), 9)]);
        assert_eq!(s.correct("smull"), Some("small"));
        assert_eq!(s.correct("stull"), Some("stall"));
    }
}
