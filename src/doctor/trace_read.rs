//! A file `mldebug run --trace` kept, told from other JSON-lines logs by its first line and
//! read whole (bounded) into processes. A trace that does not read is bad input naming the file
//! and the line.

use super::read::Run;
use crate::{Error, Result};
use mldebug_doctor::trace;
use mldebug_doctor::RunHistory;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The largest trace read (what `mldebug run` keeps is bounded the same way).
const MAX_BYTES: u64 = 256 << 20;

/// The run a trace file holds, or `None` when `p` is not a trace.
pub fn read_if_trace(p: &Path) -> Result<Option<Run>> {
    if !p.is_file() {
        return Ok(None);
    }
    let Ok(f) = std::fs::File::open(p) else {
        return Ok(None);
    };
    let mut first = String::new();
    if BufReader::new(f.take(64 << 10))
        .read_line(&mut first)
        .is_err()
        || !trace::is_trace(&first)
    {
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
    let processes = trace::parse(&text)
        .map_err(|e| Error::input(p, format_args!("line {}", e.line), &e.message))?;
    Ok(Some(Run {
        name: p.display().to_string(),
        source: p.to_path_buf(),
        place: String::new(),
        seed: None,
        history: RunHistory::default(),
        text: None,
        trace: Some(processes),
    }))
}
