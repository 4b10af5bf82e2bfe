//! Bounds on what a catalog file can make mldebug do: how large a file may be, how much of the
//! file's own text a message repeats, and how many problems are listed per file. A catalog is
//! small (tens of kilobytes); these limits only matter for a broken or hostile one, and keep every
//! command's time, memory and output proportional to the input (or smaller).

use super::model::{Location, Problem};
use std::collections::BTreeMap;

/// The largest catalog file read, in bytes (the real files are under 100 KiB).
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// At most this many problems are listed per file; the rest are counted in one more line.
pub const MAX_PROBLEMS_PER_FILE: usize = 50;
/// At most this many characters of a file's text are repeated in a message.
pub const MAX_SHOWN_CHARS: usize = 80;
/// At most this many characters in one problem message, whatever it holds.
pub const MAX_MESSAGE_CHARS: usize = 1000;

/// Text taken from a catalog file, made safe to print inside a message: control characters
/// escaped (`\n`, `\u{1b}`), cut to [`MAX_SHOWN_CHARS`] characters with `…` marking the cut.
pub fn shown(text: &str) -> String {
    escape_cut(text, MAX_SHOWN_CHARS)
}

/// Escape control characters in `text`, and cut the result to at most `max` characters (plus `…`).
pub fn escape_cut(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut n = 0;
    for c in text.chars() {
        let piece: Vec<char> = if c.is_control() {
            c.escape_default().collect()
        } else {
            vec![c]
        };
        if n + piece.len() > max {
            out.push('…');
            break;
        }
        n += piece.len();
        out.extend(piece);
    }
    out
}

/// Escape control characters in a problem's message and file, and cut the message to
/// [`MAX_MESSAGE_CHARS`] (a parser's own message may quote the file at length).
pub fn clean(p: &mut Problem) {
    if p.message.len() > MAX_MESSAGE_CHARS || p.message.contains(char::is_control) {
        p.message = escape_cut(&p.message, MAX_MESSAGE_CHARS);
    }
    if p.location.file.contains(char::is_control) {
        p.location.file = shown(&p.location.file);
    }
}

/// Sort, dedup, escape and cut `problems`, and keep the first [`MAX_PROBLEMS_PER_FILE`] of each
/// file, followed by one problem saying how many more that file has.
pub fn bound(mut problems: Vec<Problem>) -> Vec<Problem> {
    problems.iter_mut().for_each(clean);
    problems.sort();
    problems.dedup();
    let mut per_file: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut kept = Vec::new();
    for p in problems {
        let (count, last_line) = per_file.entry(p.location.file.clone()).or_default();
        *count += 1;
        if *count <= MAX_PROBLEMS_PER_FILE {
            *last_line = p.location.line;
            kept.push(p);
        }
    }
    for (file, (count, last_line)) in per_file {
        if count > MAX_PROBLEMS_PER_FILE {
            let more = count - MAX_PROBLEMS_PER_FILE;
            // Placed after the last problem listed for the file, so it reads as a footnote.
            let at = kept
                .iter()
                .rposition(|p| p.location.file == file)
                .map_or(kept.len(), |i| i + 1);
            kept.insert(
                at,
                Problem {
                    location: Location {
                        file,
                        line: last_line,
                    },
                    message: format!(
                        "and {more} more problem(s) in this file (only the first {MAX_PROBLEMS_PER_FILE} are listed)"
                    ),
                },
            );
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(file: &str, line: usize, m: &str) -> Problem {
        Problem {
            location: Location {
                file: file.into(),
                line,
            },
            message: m.into(),
        }
    }

    #[test]
    fn shown_escapes_and_cuts() {
        assert_eq!(shown("a\u{1b}[31mb\n"), "a\\u{1b}[31mb\\n");
        let long = "x".repeat(500);
        let s = shown(&long);
        assert_eq!(s.chars().count(), MAX_SHOWN_CHARS + 1);
        assert!(s.ends_with('…'));
        assert_eq!(shown("plain words"), "plain words");
    }

    #[test]
    fn bound_keeps_fifty_per_file_and_counts_the_rest() {
        let mut all: Vec<Problem> = (0..120).map(|i| p("a.md", i + 1, "bad")).collect();
        all.push(p("b.md", 3, "other"));
        let kept = bound(all);
        let a: Vec<&Problem> = kept.iter().filter(|p| p.location.file == "a.md").collect();
        assert_eq!(a.len(), MAX_PROBLEMS_PER_FILE + 1);
        assert_eq!(
            a[MAX_PROBLEMS_PER_FILE].message.split(' ').nth(1),
            Some("70")
        );
        assert_eq!(a[MAX_PROBLEMS_PER_FILE].location.line, 50);
        assert_eq!(kept.last().unwrap().location.file, "b.md");
    }

    #[test]
    fn bound_escapes_messages() {
        let kept = bound(vec![p("a.md", 1, &format!("x\u{7}{}", "y".repeat(5000)))]);
        assert!(!kept[0].message.contains('\u{7}'));
        assert!(kept[0].message.chars().count() <= MAX_MESSAGE_CHARS + 1);
    }
}
