//! From the paths on the command line to runs: plain-text logs through
//! `mldebug_doctor::textlog`, everything else through the `sweep-compare` readers.

pub use super::run::Run;
use crate::sweep::readers;
use crate::{Error, Result};
use mldebug_doctor::textlog::TextLog;
use mldebug_doctor::RunHistory;
use std::io::Read;
use std::path::{Path, PathBuf};

/// File extensions of plain-text logs.
const TEXT_EXTENSIONS: [&str; 5] = ["log", "txt", "out", "err", "stdout"];

/// Extensions the run readers own.
const RUN_EXTENSIONS: [&str; 8] = [
    "json", "jsonl", "ndjson", "csv", "db", "sqlite", "sqlite3", "wandb",
];

/// Text logs are read in blocks of this size, so a long log never sits whole in memory.
const BLOCK: usize = 1 << 20;

/// Every run under `paths`; `metrics` (from `--metric`) must each be logged by some run.
pub fn read(paths: &[PathBuf], metrics: &[String]) -> Result<Vec<Run>> {
    let mut runs = Vec::new();
    // Globs first, so a pattern's text logs are read as text logs.
    for p in &readers::walk::expand_patterns(paths)? {
        if let Some(run) = super::trace_read::read_if_trace(p)? {
            runs.push(run);
            continue;
        }
        if is_text_log(p) {
            runs.push(read_text(p)?);
            continue;
        }
        for r in readers::read_paths(std::slice::from_ref(p))? {
            runs.push(Run {
                name: r.name.clone(),
                source: r.source.clone(),
                place: r.place.clone(),
                seed: r.seed.clone(),
                history: RunHistory::from_record(&r),
                text: None,
                trace: None,
                notes: Vec::new(),
            });
        }
    }
    check_metrics(&runs, metrics)?;
    Ok(runs)
}

/// Whether a path is a plain-text log: a file with a text-log extension, or one with no
/// extension the run readers own whose first bytes are text but not JSON.
pub fn is_text_log(p: &Path) -> bool {
    if !p.is_file() {
        return false;
    }
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.starts_with("events.out.tfevents") || name == "meta.yaml" {
        return false;
    }
    let ext = p
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some(e) if TEXT_EXTENSIONS.contains(&e) => return true,
        Some(e) if RUN_EXTENSIONS.contains(&e) => return false,
        _ => {}
    }
    let mut head = Vec::with_capacity(4096);
    if std::fs::File::open(p)
        .and_then(|f| f.take(4096).read_to_end(&mut head))
        .is_err()
    {
        return false;
    }
    let text = !head.contains(&0) && !head.starts_with(b"SQLite format 3");
    let first = head.iter().find(|b| !b.is_ascii_whitespace()).copied();
    let json = matches!(first, Some(b'[')) || (first == Some(b'{') && !head.starts_with(b"{'"));
    text && !json
}

/// Reads a plain-text log in blocks.
pub fn read_text(p: &Path) -> Result<Run> {
    let mut f = std::fs::File::open(p)
        .map_err(|e| Error::usage(format!("{}: cannot read: {e}", p.display())))?;
    let mut log = TextLog::new();
    let mut buf = vec![0u8; BLOCK];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| Error::usage(format!("{}: cannot read: {e}", p.display())))?;
        if n == 0 {
            break;
        }
        log.feed(&buf[..n]);
    }
    log.finish();
    text_run(p, &log)
}

/// The run a text log holds so far; an error when no line of it was recognised.
pub fn text_run(p: &Path, log: &TextLog) -> Result<Run> {
    let report = log.report();
    if report.read == 0 {
        return Err(Error::input(
            p,
            format_args!("lines 1–{}", report.lines),
            "no training-log line recognised; read are HF Trainer dicts ({'loss': …}), \
             `step N … loss X` lines, and tqdm or Keras progress bars",
        ));
    }
    Ok(Run {
        name: p.display().to_string(),
        source: p.to_path_buf(),
        place: String::new(),
        seed: None,
        history: RunHistory::new(log.history().clone(), Default::default()),
        text: Some(report),
        trace: None,
        notes: Vec::new(),
    })
}

/// Every `--metric` name must be logged by at least one run.
fn check_metrics(runs: &[Run], metrics: &[String]) -> Result<()> {
    for m in metrics {
        if runs.iter().any(|r| r.history.get(m).is_some()) {
            continue;
        }
        let mut known: Vec<String> = runs
            .iter()
            .flat_map(|r| r.history.series.iter().map(|s| s.name.clone()))
            .collect();
        known.sort();
        known.dedup();
        let close: Vec<String> = known
            .iter()
            .filter(|k| crate::suggest::edit_distance(m, k) <= crate::suggest::SUGGEST_MAX_EDITS)
            .cloned()
            .collect();
        let hint = if close.is_empty() {
            format!(
                "logged: {}",
                known
                    .iter()
                    .take(20)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            format!("did you mean: {}?", close.join(", "))
        };
        return Err(Error::usage(format!(
            "--metric {m}: no run logs it; {hint}"
        )));
    }
    Ok(())
}
