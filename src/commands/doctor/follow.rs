//! The logs `doctor --watch` follows, polled one at a time: plain-text logs are tailed (only
//! new bytes are read), other formats are read again when their files change. A file is known by
//! its device and inode and by its first and last bytes read: when it is replaced, truncated, or
//! rewritten (larger, smaller or the same size), it is read again from the start and its run
//! starts over, so the points of two runs never mix.
//!
//! Nothing here sleeps or prints: [`Follow::poll`] reads what is new once, for the command's loop
//! and for the fuzz target that grows a file between polls.

use crate::doctor::read::{self, Run};
use crate::sweep::readers::walk::{self, FileId};
use crate::{Error, Result};
use mldebug_doctor::textlog::TextLog;
use mldebug_doctor::watch::cap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The most bytes of a text log read in one poll (the rest waits for the next), so a huge
/// backlog does not stall the first report.
pub const MAX_READ_PER_POLL: u64 = 64 << 20;

/// Bytes compared at each end of what was read of a file, to tell an append from a rewrite:
/// enough to hold a few log lines, so two runs' logs differ within them.
const EDGE_BYTES: u64 = 4096;

/// A read error is reported once the file has stayed unchanged for this many polls (a writer
/// mid-record makes a file briefly unreadable; one that stays so is broken).
pub const ERROR_GRACE_POLLS: u32 = 4;

/// A file's identity and size as `stat` gives them: when these are unchanged, so is the file.
#[derive(Debug, Clone, PartialEq)]
struct Stat {
    id: FileId,
    len: u64,
    modified: Option<SystemTime>,
}

impl Stat {
    fn of(path: &Path, meta: &std::fs::Metadata) -> Stat {
        Stat {
            id: walk::file_id(path, meta),
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}

/// One file of a re-read source when last read: its `stat`, and its first bytes.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    stat: Stat,
    /// The first bytes ([`EDGE_BYTES`] at most).
    head: Vec<u8>,
}

/// One watched path.
enum Source {
    Text {
        path: PathBuf,
        /// Bytes read so far.
        offset: u64,
        log: Box<TextLog>,
        stat: Option<Stat>,
        /// The first and the last bytes read ([`EDGE_BYTES`] at most each).
        head: Vec<u8>,
        tail: Vec<u8>,
    },
    Reread {
        path: PathBuf,
        seen: Vec<(PathBuf, Seen)>,
        runs: Vec<Run>,
        failing: Option<(Error, u32)>,
    },
}

/// What a poll found.
#[derive(Debug, Default)]
pub struct Polled {
    /// Some source has new content.
    pub changed: bool,
    /// Files that were rewritten and are read again from the start (their runs start over).
    pub rewritten: Vec<PathBuf>,
    /// Read errors that have lasted [`ERROR_GRACE_POLLS`] unchanged polls, once each.
    pub errors: Vec<String>,
}

/// Every followed path.
pub struct Follow {
    sources: Vec<Source>,
}

impl Follow {
    /// Checks the paths (a pipe, a device or a socket is refused: reading one blocks or never
    /// ends) and expands glob patterns to the files they match now.
    pub fn new(paths: &[PathBuf]) -> Result<Follow> {
        let mut sources = Vec::new();
        for p in walk::expand_patterns(paths)? {
            let meta = std::fs::metadata(&p)
                .map_err(|e| Error::usage(format!("{}: cannot read: {e}", p.display())))?;
            if !meta.is_file() && !meta.is_dir() {
                return Err(Error::usage(format!(
                    "{}: not a regular file or a directory (a pipe, socket or device); \
                     --watch follows files",
                    p.display()
                )));
            }
            sources.push(if read::is_text_log(&p) {
                Source::Text {
                    path: p,
                    offset: 0,
                    log: Box::default(),
                    stat: None,
                    head: Vec::new(),
                    tail: Vec::new(),
                }
            } else {
                Source::Reread {
                    path: p,
                    seen: Vec::new(),
                    runs: Vec::new(),
                    failing: None,
                }
            });
        }
        Ok(Follow { sources })
    }

    /// Reads what is new in every source.
    pub fn poll(&mut self) -> Result<Polled> {
        let mut out = Polled::default();
        for s in &mut self.sources {
            match s {
                Source::Text { .. } => poll_text(s, &mut out)?,
                Source::Reread { .. } => poll_reread(s, &mut out)?,
            }
        }
        Ok(out)
    }

    /// The runs as last read (a text log with no line recognised yet has none).
    pub fn runs(&self) -> Vec<Run> {
        let mut out = Vec::new();
        for s in &self.sources {
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

    /// Why the logs cannot be judged, if a source is unreadable now (a read that fails) or has
    /// never held a run (a text log with no line recognised): for the end of the watch, where
    /// it is an error, not a clean stop.
    pub fn unreadable(&self) -> Option<Error> {
        for s in &self.sources {
            match s {
                Source::Text { path, log, .. } => {
                    if let Err(e) = read::text_run(path, log) {
                        return Some(e);
                    }
                }
                Source::Reread {
                    failing: Some((e, _)),
                    ..
                } => return Some(Error::new(e.kind, e.message.clone())),
                Source::Reread { .. } => {}
            }
        }
        None
    }
}

/// Tails a text log: reads the bytes appended since the last poll, or the whole file again
/// when it was rewritten: replaced (another inode), cut shorter than what was read, or holding
/// other bytes where the first and the last bytes read were.
fn poll_text(s: &mut Source, out: &mut Polled) -> Result<()> {
    let Source::Text {
        path,
        offset,
        log,
        stat,
        head,
        tail,
    } = s
    else {
        return Ok(());
    };
    let cannot = |e: std::io::Error| Error::usage(format!("{}: cannot read: {e}", path.display()));
    let meta = std::fs::metadata(&*path).map_err(cannot)?;
    if !meta.is_file() {
        return Err(Error::usage(format!(
            "{}: no longer a regular file",
            path.display()
        )));
    }
    let now = Stat::of(path, &meta);
    if stat.as_ref() == Some(&now) {
        return Ok(());
    }
    let replaced = stat.as_ref().is_some_and(|b| b.id != now.id) || now.len < *offset;
    let start_over = replaced
        || read_at(path, 0, head.len()).map_err(cannot)? != *head
        || read_at(path, *offset - tail.len() as u64, tail.len()).map_err(cannot)? != *tail;
    if start_over {
        *offset = 0;
        **log = TextLog::new();
        head.clear();
        tail.clear();
        out.rewritten.push(path.clone());
        out.changed = true;
    }
    // What was true before this read: a write during it is met at the next poll.
    *stat = Some(now);
    let mut f = std::fs::File::open(&*path).map_err(cannot)?;
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
    let edge = EDGE_BYTES as usize;
    let room = edge.saturating_sub(head.len()).min(buf.len());
    head.extend_from_slice(&buf[..room]);
    tail.extend_from_slice(&buf[buf.len() - buf.len().min(edge)..]);
    let excess = tail.len().saturating_sub(edge);
    tail.drain(..excess);
    out.changed |= n > 0;
    Ok(())
}

/// `len` bytes of `path` from `at`.
fn read_at(path: &Path, at: u64, len: usize) -> std::io::Result<Vec<u8>> {
    let mut f = std::fs::File::open(path)?;
    f.seek(SeekFrom::Start(at))?;
    let mut buf = Vec::with_capacity(len);
    f.take(len as u64).read_to_end(&mut buf)?;
    Ok(buf)
}

/// Reads a run file or folder again when any file under it changed. A read that fails (a
/// writer mid-record) is retried at the next change, and reported once it has lasted.
fn poll_reread(s: &mut Source, out: &mut Polled) -> Result<()> {
    let Source::Reread {
        path,
        seen,
        runs,
        failing,
    } = s
    else {
        return Ok(());
    };
    let mut now = Vec::new();
    for f in walk::files_under(path)? {
        let Ok(meta) = std::fs::metadata(&f) else {
            continue; // removed since it was listed
        };
        let stat = Stat::of(&f, &meta);
        let before = seen.iter().find(|(p, _)| *p == f).map(|(_, b)| b);
        let head = match before {
            Some(b) if b.stat == stat => b.head.clone(),
            _ => read_at(&f, 0, EDGE_BYTES as usize).unwrap_or_default(),
        };
        now.push((f, Seen { stat, head }));
    }
    if now == *seen {
        if let Some((e, polls)) = failing {
            *polls += 1;
            if *polls == ERROR_GRACE_POLLS {
                out.errors.push(e.to_string());
            }
        }
        return Ok(());
    }
    // A file replaced, shortened, removed, or with other first bytes: not a run growing.
    let was_rewritten = seen.iter().any(|(p, b)| {
        now.iter().find(|(q, _)| q == p).is_none_or(|(_, n)| {
            n.stat.id != b.stat.id
                || n.stat.len < b.stat.len
                || !n
                    .head
                    .starts_with(&b.head[..b.head.len().min(n.head.len())])
        })
    });
    if was_rewritten {
        out.rewritten.push(path.clone());
    }
    *seen = now;
    match read::read(std::slice::from_ref(path), &[]) {
        Ok(r) => {
            *runs = r;
            *failing = None;
            out.changed = true;
        }
        Err(e) => {
            if was_rewritten {
                runs.clear();
            }
            *failing = Some((e, 0));
        }
    }
    Ok(())
}
