//! Plain-text helpers for the human output: word wrapping and indentation.

/// The width prose is wrapped to (a comfortable reading width that fits 100-column terminals).
pub const WRAP: usize = 88;

/// Wrap `text` to `width` columns, every line prefixed with `indent`. Blank lines between
/// paragraphs and single line breaks (list items, table rows) are kept.
pub fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    for (i, para) in text.split("\n\n").enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for source_line in para.lines() {
            let mut line = String::new();
            for word in source_line.split_whitespace() {
                if !line.is_empty()
                    && indent.len() + line.chars().count() + 1 + word.chars().count() > width
                {
                    out.push_str(indent);
                    out.push_str(&line);
                    out.push('\n');
                    line.clear();
                }
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(word);
            }
            if !line.is_empty() {
                out.push_str(indent);
                out.push_str(&line);
                out.push('\n');
            }
        }
    }
    out
}

/// On stderr: a catalog read with `--catalog` has problems (answers may be incomplete).
pub fn warn_problems(c: &crate::catalog::Catalog, g: &crate::context::Context) {
    if g.catalog.is_some() && !c.problems.is_empty() {
        let first = c.problems[0].to_string();
        eprintln!(
            "warning: the catalog has {} problem(s), first: {}; run `mldebug catalog verify`",
            c.problems.len(),
            super::terminal::safe(&first, false)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_and_indents() {
        assert_eq!(wrap("aa bb cc", 7, "  "), "  aa bb\n  cc\n");
        assert_eq!(wrap("a\n\nb", 80, ""), "a\n\nb\n");
        assert_eq!(wrap("- a\n- b", 80, ""), "- a\n- b\n");
    }
}
