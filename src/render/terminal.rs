//! Text made safe for a terminal. Run names, metric names, CSV headers, config values, catalog
//! text and file names come from files mldebug does not control; a control character in them
//! (`ESC ]0;…` retitles the window, `ESC [2J` clears it, `ESC [8m` hides what follows, `\r`
//! overwrites a line) must reach the terminal as visible text.
//!
//! Two steps, in this order:
//!
//! 1. **Data is escaped where a renderer takes it** ([`escape`], [`escape_text`]): every control
//!    character becomes a Rust escape (`\u{1b}`), so the text holds no byte a terminal acts on.
//!    Only then is it wrapped in mldebug's own colour ([`super::paint::sgr`], table cells), so
//!    no data byte can ever produce a sequence, a colour sequence included.
//! 2. **Everything printed passes [`safe`]** (see [`super::output::emit`]), and every error,
//!    warning and SVG text: with colour off, every control character but newline and tab is
//!    escaped; with colour on, the colour sequences mldebug itself writes ([`OURS`]) are kept
//!    and every other control character is escaped, so a renderer that forgot step 1 still lets
//!    no cursor movement, retitle or conceal through.

use std::borrow::Cow;

/// The SGR parameters of every colour sequence mldebug writes: [`super::paint`]'s codes, and
/// those comfy-table writes (through crossterm) for the status colours and bold headers.
pub const OURS: [&str; 15] = [
    "0", "1", "2", "22", "31", "32", "33", "36", "39", "1;31", "1;32", "1;33", "38;5;9", "38;5;10",
    "38;5;11",
];

/// A data value (a name, a label, a table cell) for a terminal: every control character,
/// newline and tab included, written as a Rust escape (`\u{1b}`, `\n`, `\u{9b}`). A value is
/// one line: a newline in a run name must not start a line of the report.
pub fn escape(text: &str) -> Cow<'_, str> {
    escaped(text, |c| c.is_control())
}

/// Data prose (a catalog paragraph, a note built from data) for a terminal: every control
/// character but newline and tab written as a Rust escape.
pub fn escape_text(text: &str) -> Cow<'_, str> {
    escaped(text, layout_unsafe)
}

/// Control characters other than newline and tab.
fn layout_unsafe(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

fn escaped(text: &str, bad: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.contains(&bad) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if bad(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Rendered text as it is printed: every control character other than newline and tab written
/// as a Rust escape; with `our_colour`, the colour sequences in [`OURS`] are kept as they are
/// (data was escaped before it was coloured, so these are mldebug's own).
pub fn safe(text: &str, our_colour: bool) -> Cow<'_, str> {
    if !text.contains(layout_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if our_colour && c == '\x1b' {
            if let Some(len) = our_sgr_len(rest) {
                out.push_str(&rest[..len]);
                rest = &rest[len..];
                continue;
            }
        }
        if layout_unsafe(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// The length of the colour sequence `ESC [ <one of OURS> m` at the start of `s`, if it is one.
fn our_sgr_len(s: &str) -> Option<usize> {
    let body = s.strip_prefix("\x1b[")?;
    let end = body.find('m')?;
    OURS.contains(&&body[..end]).then_some(2 + end + 1)
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
    fn only_our_own_colours_are_kept_and_only_when_asked() {
        let red = "\x1b[31mred\x1b[0m";
        assert_eq!(safe(red, true), red);
        assert_eq!(safe(red, false), "\\u{1b}[31mred\\u{1b}[0m");
        assert_eq!(safe("\x1b[1;32mok\x1b[0m", true), "\x1b[1;32mok\x1b[0m");
        assert_eq!(
            safe("\x1b[38;5;9mfail\x1b[39m", true),
            "\x1b[38;5;9mfail\x1b[39m"
        );
        // Well-formed SGR that mldebug never writes: conceal, blink, a 24-bit colour.
        for other in ["\x1b[8m", "\x1b[5m", "\x1b[38;2;0;0;0m", "\x1b[0;8m"] {
            assert!(!safe(other, true).contains('\x1b'), "{other:?}");
        }
        // A cursor movement or an unterminated sequence is not colour.
        assert_eq!(safe("\x1b[2A", true), "\\u{1b}[2A");
        assert_eq!(safe("\x1b[31", true), "\\u{1b}[31");
    }

    #[test]
    fn escaped_data_holds_no_control_character_and_escaping_twice_changes_nothing() {
        let data = "run\x1b[31m\nname\t\x1b[8m\u{9b}2J\r";
        let once = escape(data);
        assert!(!once.contains(char::is_control), "{once}");
        assert_eq!(escape(&once), once);
        assert_eq!(safe(&once, true), once);
        assert_eq!(escape_text("a\nb\x1b[8m"), "a\nb\\u{1b}[8m");
        // Coloured after escaping, the data's sequence stays text.
        let painted = super::super::paint::sgr(true, "31", &once);
        assert_eq!(safe(&painted, true).matches('\x1b').count(), 2);
    }
}
