//! Plain-text scans of the Markdown's words: whitespace, `mldebug check <id>`, `[^label]`.
//! Each looks at every byte a bounded number of times, whatever the text holds.

/// Collapse every run of whitespace to one space and trim.
pub fn normalise(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every `mldebug check <id>` in `t`: (byte offset, id). Placeholders (`<id>`) and flags are skipped.
pub fn check_ids_in(t: &str) -> Vec<(usize, String)> {
    const PREFIX: &str = "mldebug check ";
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = t[from..].find(PREFIX) {
        let at = from + i;
        let rest = &t[at + PREFIX.len()..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(rest.len());
        let id = &rest[..len];
        if !id.is_empty() && !id.starts_with('-') {
            out.push((at, id.to_string()));
        }
        // The id holds no space, so the next prefix starts after it.
        from = at + PREFIX.len() + len;
    }
    out
}

/// Every `[^label]` in `t`: (byte offset of `[^`, label). A label is one or more characters other
/// than `[`, `]` and whitespace. The scan never goes back: after a failed label it resumes where
/// that label stopped, so a line of `[^[^[^...` costs one pass, not one pass per `[^`.
pub fn footnote_labels_in(t: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = t[from..].find("[^") {
        let start = from + i;
        let body = start + 2;
        let Some(len) = t[body..].find(|c: char| c == ']' || c == '[' || c.is_whitespace()) else {
            break;
        };
        let end = body + len;
        if len > 0 && t.as_bytes()[end] == b']' {
            out.push((start, &t[body..end]));
            from = end + 1;
        } else {
            from = end;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footnote_labels_are_found_once_each() {
        assert_eq!(
            footnote_labels_in("a [^x] b [^y-2][^z]"),
            [(2, "x"), (9, "y-2"), (15, "z")]
        );
        assert!(footnote_labels_in("[^ x] [^] [^a b] [^").is_empty());
        assert_eq!(footnote_labels_in("[^[^[^q]"), [(4, "q")]);
        assert!(footnote_labels_in(&"[^".repeat(100_000)).is_empty());
    }

    #[test]
    fn check_ids_skip_placeholders_and_flags() {
        let ids = check_ids_in("mldebug check nan-trace x mldebug check <id> mldebug check --all");
        assert_eq!(ids, [(0, "nan-trace".to_string())]);
    }
}
