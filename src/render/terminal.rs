//! Text made safe for a terminal. Run names, config values, catalog text and file names come
//! from files mldebug does not control; a control character in them (`ESC ]0;…` retitles the
//! window, `ESC [2J` clears it, `\r` overwrites a line) must reach the terminal as visible text.
//! [`safe`] is applied to everything a command prints for a person (see
//! [`super::output::emit`]), to every error and warning, and to SVG text (XML 1.0 forbids
//! most control characters, so an escaped one keeps the plot a valid document).

use std::borrow::Cow;

/// `text` with every control character other than newline and tab written as a Rust escape
/// (`\u{1b}`, `\r`, `\u{9b}`). With `keep_colour`, well-formed SGR colour sequences
/// (`ESC [ digits;… m`, the only escape sequences mldebug writes) are kept as they are.
pub fn safe(text: &str, keep_colour: bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.contains(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if keep_colour && c == '\x1b' {
            if let Some(len) = sgr_len(rest) {
                out.push_str(&rest[..len]);
                rest = &rest[len..];
                continue;
            }
        }
        if unsafe_char(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// The length of the SGR sequence `ESC [ [0-9;]* m` at the start of `s`, if there is one.
fn sgr_len(s: &str) -> Option<usize> {
    let body = s.strip_prefix("\x1b[")?;
    let params = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (params <= 32 && body.as_bytes().get(params) == Some(&b'm')).then_some(2 + params + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(safe("plain\ttext\n", false), "plain\ttext\n");
        assert!(matches!(safe("plain", false), Cow::Borrowed(_)));
        assert_eq!(safe("a\x1b]0;title\x07b", false), "a\\u{1b}]0;title\\u{7}b");
        assert_eq!(
            safe("\x1b[2J\r\u{9b}2J\x7f", true),
            "\\u{1b}[2J\\r\\u{9b}2J\\u{7f}"
        );
    }

    #[test]
    fn colour_is_kept_only_when_asked_and_well_formed() {
        let red = "\x1b[31mred\x1b[0m";
        assert_eq!(safe(red, true), red);
        assert_eq!(safe(red, false), "\\u{1b}[31mred\\u{1b}[0m");
        assert_eq!(safe("\x1b[1;32mok\x1b[0m", true), "\x1b[1;32mok\x1b[0m");
        // A cursor movement or an unterminated sequence is not colour.
        assert_eq!(safe("\x1b[2A", true), "\\u{1b}[2A");
        assert_eq!(safe("\x1b[31", true), "\\u{1b}[31");
    }
}
