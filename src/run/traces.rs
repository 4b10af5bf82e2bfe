//! The traces of one run: every `trace-<pid>.jsonl` the command's processes wrote into the
//! private folder, read in a fixed order (by rank, then pid), kept as one file with `--trace`
//! (written whole to a temporary file and renamed), and parsed for the judgement.

use crate::{Error, Result};
use mldebug_doctor::trace::{self, Process};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The most trace text read from one run: a long `--steps 0` run writes about half a kilobyte
/// per step, and the judgement needs the first steps most.
const MAX_BYTES: u64 = 256 << 20;

/// The traces' text, one process after another, and whether it was cut at [`MAX_BYTES`].
pub fn collect(dir: &Path) -> Result<(String, bool)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(format!("reading {}", dir.display()), &e))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("trace-") && n.ends_with(".jsonl"))
        })
        .collect();
    let mut texts = Vec::new();
    for f in files.drain(..) {
        let file = std::fs::File::open(&f)
            .map_err(|e| Error::io(format!("reading {}", f.display()), &e))?;
        let mut text = String::new();
        let mut reader = BufReader::new(file);
        let mut line = String::new();
        loop {
            line.clear();
            let n = reader
                .by_ref()
                .take(trace::read::MAX_LINE as u64 + 1)
                .read_line(&mut line)
                .map_err(|e| Error::io(format!("reading {}", f.display()), &e))?;
            // A process killed mid-line leaves an unfinished last line: not a record.
            if n == 0 || !line.ends_with('\n') {
                break;
            }
            text.push_str(&line);
        }
        texts.push(text);
    }
    texts.sort_by_key(|t| order_key(t));
    let mut all = String::new();
    let mut cut = false;
    for t in texts {
        if (all.len() + t.len()) as u64 > MAX_BYTES {
            cut = true;
            break;
        }
        all.push_str(&t);
    }
    Ok((all, cut))
}

/// (rank, pid) from a trace's first line; processes without a rank come first.
fn order_key(text: &str) -> (i64, u64) {
    let first = text.lines().next().unwrap_or("");
    let v: serde_json::Value = serde_json::from_str(first).unwrap_or_default();
    (
        v["rank"].as_i64().unwrap_or(-1),
        v["pid"].as_u64().unwrap_or(0),
    )
}

/// Keeps the traces at `path` (written whole, then renamed into place).
pub fn keep(text: &str, path: &Path) -> Result<()> {
    crate::atomic_file::write(path, text.as_bytes())
        .map_err(|e| Error::io(format!("writing {}", path.display()), &e))
}

/// The processes in `text`; a line that does not read is an internal error (the probes wrote
/// it), naming the line.
pub fn parse(text: &str) -> Result<Vec<Process>> {
    trace::parse(text).map_err(|e| Error::internal(format!("the run's trace does not read: {e}")))
}
