//! The `doctor` fuzz targets: a plain-text log read, judged, rendered and plotted as `doctor
//! LOG --plot` does (`text_log`), and `doctor --watch` polling files that grow, and are
//! rewritten, between polls (`watch`): no sleeping, one poll per piece of the input, so an
//! input is a bounded amount of work.

use super::{records, write};
use crate::commands::doctor::watch::Judged;
use crate::commands::doctor::Follow;
use crate::doctor::{read, report};
use crate::render::{doctor as render, doctor_plot, style::Style};
use mldebug_doctor::Options;
use std::io::Write;
use std::path::Path;

/// A piece of the `watch` target's input that starts with this goes to the JSONL file (else to
/// the text log).
pub const TO_JSONL: &[u8] = b"!jsonl";
/// A piece (after any [`TO_JSONL`]) that starts with this replaces its file's contents
/// (truncated and written again) instead of being appended.
pub const REWRITE: &[u8] = b"!rewrite";
/// The JSONL file's first line, so that it is a run before any piece reaches it.
const JSONL_START: &[u8] = b"{\"step\": 0, \"loss\": 1.0}\n";

/// Reads `data` as a plain-text training log, then judges, renders and plots it.
pub fn text_log(root: &Path, data: &[u8]) -> bool {
    let log = write(root, "logs/train.log", data);
    let Ok(runs) = read::read(&[log], &[]) else {
        return false;
    };
    let r = report::build(&runs, &[], crate::catalog::embedded());
    let _ = render::render(&r, Style::plain());
    doctor_plot::render(&r).is_ok()
}

/// Reads `data` as a trace kept by `mldebug run --trace` (read, judged and rendered as `doctor
/// TRACE` does), and as one process's trace file in a run's private folder (collected, parsed
/// and judged as `mldebug run` does); true when both read it.
pub fn run_trace(root: &Path, data: &[u8]) -> bool {
    let kept = write(root, "trace/run.jsonl", data);
    let doctor = read::read(&[kept], &[]).is_ok_and(|runs| {
        let r = report::build(&runs, &[], crate::catalog::embedded());
        let _ = render::render(&r, Style::plain());
        true
    });
    write(root, "private/trace-1.jsonl", data);
    let run = crate::run::traces::collect(&root.join("private"))
        .and_then(|c| crate::run::traces::parse(&c.text))
        .is_ok_and(|processes| {
            let _ = mldebug_doctor::trace::judge(&processes);
            true
        });
    doctor && run
}

/// Follows a text log and a JSONL file while each piece of `data` is appended to one of them
/// (or rewrites it), polling after each piece as `doctor --watch` does, and judging what was
/// read; true when every poll read and both files hold a run at the end.
pub fn watch(root: &Path, data: &[u8]) -> bool {
    let text = write(root, "logs/train.log", b"");
    let jsonl = write(root, "logs/metrics.jsonl", JSONL_START);
    let Ok(mut follow) = Follow::new(&[text.clone(), jsonl.clone()]) else {
        return false;
    };
    let opts = Options::default();
    let mut judged = Judged::default();
    let mut read_all = true;
    for piece in records(data) {
        let (file, piece) = match piece.strip_prefix(TO_JSONL) {
            Some(rest) => (&jsonl, rest),
            None => (&text, piece),
        };
        let (bytes, rewrite) = match piece.strip_prefix(REWRITE) {
            Some(rest) => (rest, true),
            None => (piece, false),
        };
        let mut f = std::fs::OpenOptions::new()
            .append(!rewrite)
            .write(true)
            .truncate(rewrite)
            .open(file)
            .unwrap_or_else(|e| panic!("fuzz scratch {}: {e}", file.display()));
        f.write_all(bytes)
            .unwrap_or_else(|e| panic!("fuzz scratch {}: {e}", file.display()));
        drop(f);
        match follow.poll() {
            Ok(polled) => {
                let _ = judged.fresh(&follow.runs(), &polled.rewritten, &opts);
            }
            Err(_) => read_all = false,
        }
    }
    read_all && follow.unreadable().is_none()
}
