//! Does a quote in the Markdown match its evidence excerpt? Whitespace is normalised. A quote
//! without an elision must equal the excerpt's text. `[...]` marks an elision: the pieces between
//! elisions must appear, in order, in the excerpt's text or its context. Nothing else is
//! forgiven: not a letter, not a curly quote, not a full stop.

use super::markdown::normalise;
use super::model::Excerpt;

/// How an elision is written, in the Markdown and in the evidence.
pub const ELISION: &str = "[...]";

/// Whether `quote` matches `excerpt`.
pub fn matches(quote: &str, excerpt: &Excerpt) -> bool {
    let quote = normalise(quote);
    let text = normalise(&excerpt.text);
    if quote == text {
        return true;
    }
    let Some(pieces) = elided_pieces(&quote) else {
        return false;
    };
    in_order(&pieces, &text) || in_order(&pieces, &normalise(&excerpt.context))
}

/// The pieces between the elisions of a quote, each normalised; `None` when the quote has no
/// elision or nothing but elisions.
pub fn elided_pieces(quote: &str) -> Option<Vec<String>> {
    if !quote.contains(ELISION) {
        return None;
    }
    let pieces: Vec<String> = quote
        .split(ELISION)
        .map(normalise)
        .filter(|p| !p.is_empty())
        .collect();
    (!pieces.is_empty()).then_some(pieces)
}

/// Whether `pieces` appear in `haystack` in order, without overlapping (one pass over it).
pub fn in_order(pieces: &[String], haystack: &str) -> bool {
    let mut from = 0;
    for p in pieces {
        match haystack[from..].find(p.as_str()) {
            Some(i) => from += i + p.len(),
            None => return false,
        }
    }
    true
}

/// Where `quote` first departs from `excerpt`'s text, word by word: (1-based word number, the
/// quote's word, the excerpt's word); `None` when one is a prefix of the other.
pub fn first_difference(quote: &str, excerpt: &str) -> Option<(usize, String, String)> {
    let q: Vec<&str> = quote.split_whitespace().collect();
    let x: Vec<&str> = excerpt.split_whitespace().collect();
    for i in 0..q.len().max(x.len()) {
        let (a, b) = (q.get(i).copied(), x.get(i).copied());
        if a != b {
            return Some((
                i + 1,
                a.unwrap_or("(end)").to_string(),
                b.unwrap_or("(end)").to_string(),
            ));
        }
    }
    None
}

/// How many leading words `quote` and `excerpt` share (to pick the excerpt a bad quote meant).
pub fn shared_prefix_words(quote: &str, excerpt: &str) -> usize {
    quote
        .split_whitespace()
        .zip(excerpt.split_whitespace())
        .take_while(|(a, b)| a == b)
        .count()
}

/// [`shared_prefix_words`] for two normalised texts (single spaces, trimmed), by one comparison of
/// their bytes: fast enough to run against every excerpt of a large source.
pub fn shared_prefix_words_normalised(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let p = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let spaces = a[..p].iter().filter(|c| **c == b' ').count();
    let ends_word = |s: &[u8]| p == s.len() || s[p] == b' ';
    spaces + usize::from(p > 0 && ends_word(a) && ends_word(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::QuoteStatus;

    fn excerpt(text: &str, context: &str) -> Excerpt {
        Excerpt {
            id: "x".into(),
            text: text.into(),
            context: context.into(),
            status: QuoteStatus::VerifiedExact,
            note: String::new(),
            verified_against: String::new(),
            topics: vec![],
        }
    }

    #[test]
    fn exact_and_whitespace_normalised() {
        let x = excerpt("One two  three.", "");
        assert!(matches("One two three.", &x));
        assert!(matches(" One\ntwo three. ", &x));
        assert!(!matches("One too three.", &x));
        assert!(
            !matches("One two three", &x),
            "a dropped full stop is a difference"
        );
    }

    #[test]
    fn elisions_need_pieces_in_order() {
        let x = excerpt("A b c. D e f. G h i.", "");
        assert!(matches("A b c. [...] G h i.", &x));
        assert!(!matches("G h i. [...] A b c.", &x), "out of order");
        assert!(!matches("A b c. [...] G h j.", &x));
    }

    #[test]
    fn context_counts_for_elided_pieces() {
        let x = excerpt("A b [...] f.", "A b c d e f. More.");
        assert!(matches("A b [...] f.", &x));
        assert!(matches("A b c [...] More.", &x));
    }

    #[test]
    fn differences_are_located() {
        assert_eq!(
            first_difference("a b c", "a x c"),
            Some((2, "b".into(), "x".into()))
        );
        assert_eq!(first_difference("a b", "a b"), None);
        assert_eq!(shared_prefix_words("a b c", "a b d"), 2);
        for (x, y) in [
            ("a b c", "a b d"),
            ("a b", "a b"),
            ("ab c", "a b"),
            ("", "a"),
            ("a bc", "a b"),
            ("x", "y z"),
        ] {
            assert_eq!(
                shared_prefix_words_normalised(x, y),
                shared_prefix_words(x, y),
                "{x:?} {y:?}"
            );
        }
    }
}
