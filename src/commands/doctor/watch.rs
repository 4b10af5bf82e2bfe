//! `doctor --watch`: poll logs that are still being written and print each finding once, as it
//! appears. Plain-text logs are tailed (only new bytes are read, an unfinished last line waits
//! for the next poll); other formats are read again when their files change, and a read that
//! fails while a writer is mid-record is retried at the next change. Series are capped (see
//! `mldebug_doctor::watch`), so memory stays bounded however long the run goes on.

use super::Args;
use crate::context::Context;
use crate::doctor::read::{self, Run};
use crate::doctor::report::link;
use crate::render::output::{emit, emit_json, note};
use crate::render::{doctor as render, style::Style};
use crate::{Error, Exit, Result};
use mldebug_doctor::watch::{cap, Reported};
use mldebug_doctor::{diagnose, textlog::TextLog, Options, Severity};
use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// How often the logs are polled: often enough that a finding shows within a second of being
/// logged, rarely enough that watching costs nothing next to training.
const POLL: Duration = Duration::from_millis(500);

/// The most bytes of a text log read in one poll (the rest waits for the next), so a huge
/// backlog does not stall the first report.
const MAX_READ_PER_POLL: u64 = 64 << 20;

/// A read error is reported once the file has stayed unchanged for this many polls (a writer
/// mid-record makes a file briefly unreadable; one that stays so is broken).
const ERROR_GRACE_POLLS: u32 = 4;

/// One watched path.
enum Source {
    Text {
        path: PathBuf,
        offset: u64,
        log: Box<TextLog>,
    },
    Reread {
        path: PathBuf,
        fingerprint: Vec<(PathBuf, u64, Option<SystemTime>)>,
        runs: Vec<Run>,
        failing: Option<(String, u32)>,
    },
}

pub fn run(args: &Args, g: &Context) -> Result<Exit> {
    let mut sources: Vec<Source> = Vec::new();
    for p in &args.paths {
        if !p.exists() {
            return Err(Error::usage(format!(
                "{}: no such file or directory",
                p.display()
            )));
        }
        sources.push(if read::is_text_log(p) {
            Source::Text {
                path: p.clone(),
                offset: 0,
                log: Box::default(),
            }
        } else {
            Source::Reread {
                path: p.clone(),
                fingerprint: Vec::new(),
                runs: Vec::new(),
                failing: None,
            }
        });
    }
    let catalog = crate::catalog::open(g)?;
    let style = Style::from(g.stdout);
    let opts = Options {
        metrics: args.metrics.clone(),
    };
    let fail_at = args.fail_on.map(|f| f.severity());
    let mut reported: BTreeMap<String, Reported> = BTreeMap::new();
    let mut worst: Option<Severity> = None;
    let mut last_change = Instant::now();
    loop {
        let mut changed = false;
        for s in &mut sources {
            changed |= poll(s)?;
        }
        if changed {
            last_change = Instant::now();
            for run in current_runs(&sources) {
                let d = diagnose(&run.history, &opts);
                let seen = reported.entry(run.name.clone()).or_default();
                for f in seen.fresh(&d.findings) {
                    let playbook = link(&catalog, f.symptom.id());
                    if g.json() {
                        emit_json(&render::watch_json(&run.name, f, playbook.as_ref())?)?;
                    } else {
                        let line = render::watch_line(&run.name, f, playbook.as_ref(), style);
                        emit(&line, style.colour)?;
                    }
                    worst = worst.max(Some(f.severity));
                    if fail_at.is_some_and(|level| f.severity >= level) {
                        return Ok(Exit::Failed);
                    }
                }
            }
        }
        if let Some(t) = args.idle_timeout {
            if last_change.elapsed().as_secs_f64() >= t {
                note(&format!("doctor: no change for {t} s; stopped watching"));
                let level = fail_at.unwrap_or(Severity::Fail);
                return Ok(if worst.is_some_and(|w| w >= level) {
                    Exit::Failed
                } else {
                    Exit::Ok
                });
            }
        }
        std::thread::sleep(POLL);
    }
}

/// The runs as last read.
fn current_runs(sources: &[Source]) -> Vec<Run> {
    let mut out = Vec::new();
    for s in sources {
        match s {
            Source::Text { path, log, .. } => {
                if let Ok(run) = read::text_run(path, log) {
                    out.push(run);
                }
            }
            Source::Reread { runs, .. } => out.extend(runs.iter().cloned()),
        }
    }
    out
}

/// Reads what is new in one source; whether anything changed.
fn poll(s: &mut Source) -> Result<bool> {
    match s {
        Source::Text { path, offset, log } => tail(path, offset, log),
        Source::Reread {
            path,
            fingerprint,
            runs,
            failing,
        } => {
            let now = fingerprint_of(path);
            if now == *fingerprint {
                if let Some((msg, polls)) = failing {
                    *polls += 1;
                    if *polls == ERROR_GRACE_POLLS {
                        note(&format!("error: {msg}"));
                    }
                }
                return Ok(false);
            }
            *fingerprint = now;
            match read::read(std::slice::from_ref(path), &[]) {
                Ok(r) => {
                    *runs = r;
                    *failing = None;
                    Ok(true)
                }
                Err(e) => {
                    *failing = Some((e.to_string(), 0));
                    Ok(false)
                }
            }
        }
    }
}

/// Reads the bytes appended to a text log since the last poll. A file that shrank was
/// rewritten: it is read again from the start.
fn tail(path: &Path, offset: &mut u64, log: &mut Box<TextLog>) -> Result<bool> {
    let cannot = |e: std::io::Error| Error::usage(format!("{}: cannot read: {e}", path.display()));
    let len = std::fs::metadata(path).map_err(cannot)?.len();
    if len < *offset {
        *offset = 0;
        **log = TextLog::new();
    }
    if len == *offset {
        return Ok(false);
    }
    let mut f = std::fs::File::open(path).map_err(cannot)?;
    f.seek(SeekFrom::Start(*offset)).map_err(cannot)?;
    let mut buf = Vec::new();
    let n = f
        .take(MAX_READ_PER_POLL)
        .read_to_end(&mut buf)
        .map_err(cannot)?;
    *offset += n as u64;
    log.feed(&buf);
    for points in log.history_mut().values_mut() {
        cap(points);
    }
    Ok(n > 0)
}

/// Size and modification time of every file under `path` (one `stat` each).
fn fingerprint_of(path: &Path) -> Vec<(PathBuf, u64, Option<SystemTime>)> {
    let mut out = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(meta) = std::fs::metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&p) {
                stack.extend(entries.flatten().map(|e| e.path()));
            }
        } else {
            out.push((p, meta.len(), meta.modified().ok()));
        }
    }
    out.sort();
    out
}
