//! Symptom row ids: each row of the PLAYBOOK symptoms table ends its symptom cell with
//! `{#id}` (lower-case letters, digits and `-`), the same syntax as a heading's id. The id is
//! what tests, scripts and agents hold on to; the wording of the symptom may change, the id
//! does not. `verify` reports a row without an id, a malformed id, and an id used twice.

use super::model::{Catalog, Problem};
use std::collections::BTreeMap;

/// `Loss is NaN {#loss-nan}` → (`Loss is NaN`, `Some("loss-nan")`); without a trailing `{#...}`
/// the text is returned whole with `None`.
pub fn split(cell: &str) -> (String, Option<String>) {
    let t = cell.trim_end();
    if let Some(body) = t.strip_suffix('}') {
        if let Some(at) = body.rfind("{#") {
            let id = body[at + 2..].trim().to_string();
            return (t[..at].trim_end().to_string(), Some(id));
        }
    }
    (t.to_string(), None)
}

/// Whether `id` is a well-formed row id: lower-case ASCII letters, digits and single `-`
/// between them.
pub fn well_formed(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !id.starts_with('-')
        && !id.ends_with('-')
        && !id.contains("--")
}

/// The id used for a row that has none: its symptom as a slug (so output stays usable while
/// the row is being written; `verify` asks for an explicit one).
pub fn fallback(symptom: &str) -> String {
    let mut slug = String::new();
    for c in symptom.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    slug.trim_end_matches('-').to_string()
}

/// The message for a row without an id.
pub const MISSING: &str =
    "symptoms table row without an id: end the symptom with `{#an-id}` (lower-case letters, digits and -)";

/// Problems with the symptom ids across the catalog (both symptom tables): malformed or used
/// twice.
pub fn verify(c: &Catalog, out: &mut Vec<Problem>) {
    let mut seen: BTreeMap<&str, String> = BTreeMap::new();
    for s in c.symptoms.iter().chain(&c.log_symptoms) {
        if !s.id_given {
            continue;
        }
        if !well_formed(&s.id) {
            out.push(Problem {
                location: s.location.clone(),
                message: format!(
                    "symptom id `{}` is malformed: use lower-case letters, digits and single `-`",
                    s.id
                ),
            });
        }
        if let Some(first) = seen.insert(&s.id, s.location.to_string()) {
            out.push(Problem {
                location: s.location.clone(),
                message: format!("symptom id `{}` is already used at {first}", s.id),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_takes_a_trailing_id() {
        assert_eq!(
            split("Loss is NaN {#loss-nan}"),
            ("Loss is NaN".to_string(), Some("loss-nan".to_string()))
        );
        assert_eq!(split("Loss is NaN"), ("Loss is NaN".to_string(), None));
        assert_eq!(
            split("Uses {#x} inside"),
            ("Uses {#x} inside".to_string(), None)
        );
        assert_eq!(split("{#only}"), (String::new(), Some("only".to_string())));
    }

    #[test]
    fn ids_are_slugs() {
        assert!(well_formed("loss-nan") && well_formed("oom") && well_formed("a-beats-b"));
        for bad in ["", "Loss", "loss nan", "-x", "x-", "a--b", "loss_nan", "é"] {
            assert!(!well_formed(bad), "{bad}");
        }
        assert_eq!(fallback("Loss is NaN (or inf)!"), "loss-is-nan-or-inf");
        assert!(well_formed(&fallback("Loss is NaN (or inf)!")));
    }
}
