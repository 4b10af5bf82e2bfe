//! A file `mldebug run --trace` kept, told from other JSON-lines logs by its first line (a
//! byte-order mark before it aside) and read whole (bounded) into processes. A last line cut
//! mid-record (a trace copied while it was written) is left out with a note, as `mldebug run`
//! leaves out a process's unfinished line; any other line that does not read is bad input
//! naming the file and the line: a trace is judged or refused, never passed unread.

use super::run::Run;
use crate::{Error, Result};
use mldebug_doctor::trace;
use mldebug_doctor::RunHistory;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The largest trace read (what `mldebug run` keeps is bounded the same way).
const MAX_BYTES: u64 = 256 << 20;

/// A UTF-8 byte-order mark, which some editors and tools put before the first line.
const BOM: char = '\u{feff}';

/// The text without its last line when that line has no line end and does not read as a
/// record (a trace cut while it was being written), and that line's number.
fn without_cut_line(text: &str) -> (&str, Option<usize>) {
    if text.is_empty() || text.ends_with('\n') {
        return (text, None);
    }
    let start = text.rfind('\n').map_or(0, |i| i + 1);
    let last = &text[start..];
    if serde_json::from_str::<serde_json::Value>(last).is_ok_and(|v| v.is_object()) {
        return (text, None);
    }
    (&text[..start], Some(text[..start].lines().count() + 1))
}

/// Whether a first line opens a run trace, or means to: a `start` record, even one that lacks
/// its version (then the trace is refused as bad input naming the line, not read as another
/// kind of log that holds no series and passes).
fn looks_like_trace(first: &str) -> bool {
    trace::is_trace(first)
        || serde_json::from_str::<serde_json::Value>(first)
            .is_ok_and(|v| v.get("kind").and_then(|k| k.as_str()) == Some("start"))
}

/// A file's first line (read from its first 64 KiB), a byte-order mark before it left out; `None`
/// when it cannot be read.
pub fn first_line(p: &Path) -> Option<String> {
    let f = std::fs::File::open(p).ok()?;
    let mut first = String::new();
    BufReader::new(f.take(64 << 10))
        .read_line(&mut first)
        .ok()?;
    Some(first.trim_start_matches(BOM).to_string())
}

/// The run a trace file holds, or `None` when `p` is not a trace.
pub fn read_if_trace(p: &Path) -> Result<Option<Run>> {
    if !p.is_file() {
        return Ok(None);
    }
    if !first_line(p).is_some_and(|first| looks_like_trace(&first)) {
        return Ok(None);
    }
    let meta =
        std::fs::metadata(p).map_err(|e| Error::io(format!("reading {}", p.display()), &e))?;
    if meta.len() > MAX_BYTES {
        return Err(Error::input(
            p,
            "the whole file",
            format_args!(
                "a trace of {} bytes; at most {MAX_BYTES} are read",
                meta.len()
            ),
        ));
    }
    let text = std::fs::read(p).map_err(|e| Error::io(format!("reading {}", p.display()), &e))?;
    let text = String::from_utf8(text).map_err(|e| {
        Error::input(
            p,
            format_args!("byte {}", e.utf8_error().valid_up_to()),
            "not UTF-8",
        )
    })?;
    let (whole, cut) = without_cut_line(text.trim_start_matches(BOM));
    let notes = cut
        .map(|line| {
            format!(
                "{}: line {line} ends without a line end and is not a whole record (the trace \
                 was copied while it was written?); the lines before it are judged",
                p.display()
            )
        })
        .into_iter()
        .collect();
    let processes = trace::parse(whole)
        .map_err(|e| Error::input(p, format_args!("line {}", e.line), &e.message))?;
    if processes.is_empty() {
        return Err(Error::input(p, "line 1", "a trace with no process in it"));
    }
    Ok(Some(Run {
        name: p.display().to_string(),
        source: p.to_path_buf(),
        place: String::new(),
        seed: None,
        history: RunHistory::default(),
        text: None,
        trace: Some(processes),
        notes,
    }))
}

#[cfg(test)]
mod tests {
    use super::without_cut_line;

    #[test]
    fn only_an_unfinished_last_line_that_is_not_a_record_is_cut() {
        let whole = "{\"kind\":\"start\"}\n{\"kind\":\"step\"}\n";
        assert_eq!(without_cut_line(whole), (whole, None));
        let cut = "{\"kind\":\"start\"}\n{\"kind\":\"st";
        assert_eq!(without_cut_line(cut), ("{\"kind\":\"start\"}\n", Some(2)));
        // A whole record that merely lacks its line end is kept.
        let unended = "{\"kind\":\"start\"}\n{\"kind\":\"step\"}";
        assert_eq!(without_cut_line(unended), (unended, None));
        assert_eq!(without_cut_line(""), ("", None));
    }
}
