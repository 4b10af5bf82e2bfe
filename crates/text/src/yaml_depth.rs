//! A linear pre-scan that refuses YAML whose flow collections (`[`, `{`) nest too deep, before
//! the YAML parser sees it.
//!
//! libyaml's scanner (under `serde_norway`) keeps state per open flow level and rescans it, so
//! 40,000 unclosed `[` take seconds and 200,000 take a minute before the parser gives up with
//! "recursion limit exceeded" at depth 128 anyway. Configs, front matter and evidence files
//! never nest past a handful of levels; [`MAX_FLOW_DEPTH`] is far above any of them and below the
//! parser's own limit, so nothing the parser would accept is refused.
//!
//! The scan follows just enough of YAML to not count brackets that are text: quoted scalars
//! (`'…'`, `"…"`), comments (`# …`) and block scalars (`|`, `>` and the lines indented under
//! them). A bracket in block context opens a collection only where a value can start (after
//! whitespace or at the start of a line), so `loss[0]` is text.

use std::fmt;

/// The deepest flow nesting accepted.
pub const MAX_FLOW_DEPTH: usize = 64;

/// Where the nesting went past [`MAX_FLOW_DEPTH`] (1-based line and column, in bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooDeep {
    /// 1-based line of the bracket that went too deep.
    pub line: usize,
    /// 1-based column of that bracket, in bytes.
    pub column: usize,
}

impl fmt::Display for TooDeep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: YAML nested more than {MAX_FLOW_DEPTH} levels deep",
            self.line, self.column
        )
    }
}

impl std::error::Error for TooDeep {}

#[derive(Clone, Copy, PartialEq)]
enum Quote {
    None,
    Single,
    Double,
}

/// `Err` with the place of the first bracket past [`MAX_FLOW_DEPTH`]. One pass over the bytes.
pub fn check(text: &[u8]) -> Result<(), TooDeep> {
    let mut depth = 0usize;
    let mut quote = Quote::None;
    // Lines indented more than this belong to a block scalar and are skipped.
    let mut block_scalar_indent: Option<usize> = None;
    for (line_no, line) in text.split(|&b| b == b'\n').enumerate() {
        let indent = line.iter().take_while(|&&b| b == b' ').count();
        if let Some(parent) = block_scalar_indent {
            let blank = line.iter().all(|b| b.is_ascii_whitespace());
            if blank || indent > parent {
                continue;
            }
            block_scalar_indent = None;
        }
        let mut prev = b'\n';
        // In block context a collection or a quoted scalar starts only where a value can: at
        // the start of the line or after `key: `, `- `, `? `, an anchor or a tag.
        let mut value_start = depth == 0 && quote == Quote::None;
        let mut i = 0;
        while i < line.len() {
            let b = line[i];
            match quote {
                Quote::Single => {
                    if b == b'\'' {
                        if line.get(i + 1) == Some(&b'\'') {
                            i += 1; // '' is an escaped quote
                        } else {
                            quote = Quote::None;
                        }
                    }
                }
                Quote::Double => {
                    if b == b'\\' {
                        i += 1;
                    } else if b == b'"' {
                        quote = Quote::None;
                    }
                }
                Quote::None if depth == 0 => {
                    let next_blank = line.get(i + 1).is_none_or(|c| c.is_ascii_whitespace());
                    match b {
                        b'#' if prev.is_ascii_whitespace() => break,
                        b' ' | b'\t' => {}
                        b':' | b'-' | b'?' if next_blank => value_start = true,
                        b'&' | b'!' | b'*' if value_start => {
                            // An anchor, tag or alias: skip its name, the value may follow.
                            while line.get(i + 1).is_some_and(|c| !c.is_ascii_whitespace()) {
                                i += 1;
                            }
                        }
                        b'\'' if value_start => quote = Quote::Single,
                        b'"' if value_start => quote = Quote::Double,
                        b'[' | b'{' if value_start => depth = 1,
                        _ => value_start = false,
                    }
                }
                Quote::None => {
                    let token_start =
                        prev.is_ascii_whitespace() || matches!(prev, b'[' | b'{' | b',');
                    match b {
                        b'#' if prev.is_ascii_whitespace() => break,
                        b'\'' if token_start => quote = Quote::Single,
                        b'"' if token_start => quote = Quote::Double,
                        b'[' | b'{' => {
                            depth += 1;
                            if depth > MAX_FLOW_DEPTH {
                                return Err(TooDeep {
                                    line: line_no + 1,
                                    column: i + 1,
                                });
                            }
                        }
                        b']' | b'}' => {
                            depth -= 1;
                            value_start = false;
                        }
                        _ => {}
                    }
                }
            }
            prev = b;
            i += 1;
        }
        if depth == 0 && quote == Quote::None && starts_block_scalar(line) {
            block_scalar_indent = Some(indent);
        }
    }
    Ok(())
}

/// Whether the line ends (before any comment) with a block scalar indicator: `|` or `>`, with
/// optional chomping and indentation indicators (`|-`, `>+2`).
fn starts_block_scalar(line: &[u8]) -> bool {
    let end = line
        .windows(2)
        .position(|w| w[0].is_ascii_whitespace() && w[1] == b'#')
        .unwrap_or(line.len());
    let body = line[..end].trim_ascii_end();
    let head = body.trim_ascii_end_matches(|b: u8| b == b'+' || b == b'-' || b.is_ascii_digit());
    matches!(head.last(), Some(b'|' | b'>'))
        && (head.len() == 1 || head[head.len() - 2].is_ascii_whitespace())
}

trait TrimMatches {
    fn trim_ascii_end_matches(&self, f: impl Fn(u8) -> bool) -> &[u8];
}

impl TrimMatches for [u8] {
    fn trim_ascii_end_matches(&self, f: impl Fn(u8) -> bool) -> &[u8] {
        let keep = self.iter().rposition(|&b| !f(b)).map_or(0, |p| p + 1);
        &self[..keep]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deep(open: &str, n: usize) -> String {
        open.repeat(n)
    }

    #[test]
    fn ordinary_yaml_passes() {
        for ok in [
            "a: 1\nb: [1, 2, {c: [3]}]\n",
            "lr: 0.001\nlayers: [[1, 2], [3, 4]]\n",
            "name: x\ndescription: text with loss[0] and a [link](x) and 'quotes'\n",
            "- &a [1]\n- *a\n",
        ] {
            assert_eq!(check(ok.as_bytes()), Ok(()), "{ok}");
        }
        // Exactly the limit passes, one more is refused.
        let at_limit = format!(
            "{}{}",
            "[".repeat(MAX_FLOW_DEPTH),
            "]".repeat(MAX_FLOW_DEPTH)
        );
        assert_eq!(check(at_limit.as_bytes()), Ok(()));
        let over = format!("a: {}", "[".repeat(MAX_FLOW_DEPTH + 1));
        assert_eq!(
            check(over.as_bytes()),
            Err(TooDeep {
                line: 1,
                column: 4 + MAX_FLOW_DEPTH
            })
        );
    }

    #[test]
    fn deep_flow_nesting_is_refused_with_its_place() {
        for open in ["[", "{", "[{", "{a: [", "- [", "? [", "[ 'x', \"y\", "] {
            let text = format!("x: 1\nk: {}", deep(open, 100_000));
            let e = check(text.as_bytes()).unwrap_err();
            assert_eq!(e.line, 2, "{open}");
        }
    }

    #[test]
    fn brackets_that_are_text_do_not_count() {
        let n = 1_000;
        let texts = [
            format!("a: '{}'\n", "[".repeat(n)),
            format!("a: \"{}\"\n", "{".repeat(n)),
            format!("a: \"x\\\" {}\"\n", "[".repeat(n)),
            format!("a: 'it''s {}'\n", "[".repeat(n)),
            format!("a: 1 # {}\n", "[".repeat(n)),
            format!("a: |\n  {}\n  more\nb: 2\n", "[".repeat(n)),
            format!(
                "a: >-\n    {}\n\n    {}\nb: 2\n",
                "[".repeat(n),
                "{".repeat(n)
            ),
            format!("a: x{}\n", "[".repeat(n)),
            format!("a: x [{}\n", "[".repeat(n)),
            format!("- &anchor !!str text {}\n", "{".repeat(n)),
            (0..n).map(|i| format!("k{i}: x[{i}\n")).collect(),
        ];
        for t in texts {
            assert_eq!(check(t.as_bytes()), Ok(()), "{}", &t[..40]);
        }
    }

    #[test]
    fn a_block_scalar_ends_at_its_indentation() {
        let t = format!("a: |\n  text\nb: {}", "[".repeat(100));
        assert!(check(t.as_bytes()).is_err());
    }

    #[test]
    fn quotes_inside_words_do_not_hide_brackets() {
        let t = format!("a: don't {}", "[".repeat(100));
        // Text in a plain scalar: the brackets are text too.
        assert_eq!(check(t.as_bytes()), Ok(()));
        let t = format!("a: [don't, {}", "[".repeat(100));
        assert!(check(t.as_bytes()).is_err());
    }
}
