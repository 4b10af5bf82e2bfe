//! The traces of one run: every `trace-<pid>.jsonl` the command's processes wrote into the
//! private folder, read in a fixed order (by rank, then pid), kept as one file with `--trace`
//! ([`Target`]: checked before the command starts, written whole to a temporary file and
//! renamed), and parsed for the judgement.

use crate::{Error, Result};
use mldebug_doctor::trace::{self, Process};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// The most trace text read from one run: a long `--steps 0` run writes about half a kilobyte
/// per step, and the judgement needs the first steps most.
const MAX_BYTES: u64 = 256 << 20;

/// The traces of one run, read back.
#[derive(Debug, Default)]
pub struct Collected {
    /// Their text, one process after another.
    pub text: String,
    /// Whether it was cut at [`MAX_BYTES`].
    pub cut: bool,
    /// Processes whose trace holds a line longer than a record may be: the trace is read up to
    /// it. (The file's name, the line's number.)
    pub overlong: Vec<(String, usize)>,
    /// Python processes that loaded the probes' bootstrap (`started-<pid>`), and those of them
    /// that imported torch (`torch-<pid>`): how far a run that traced nothing got.
    pub started: usize,
    pub imported_torch: usize,
}

/// Every process's trace in `dir`, in a fixed order.
pub fn collect(dir: &Path) -> Result<Collected> {
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
    let marked = |prefix: &str| {
        std::fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .filter(|e| {
                        e.file_name()
                            .to_str()
                            .is_some_and(|n| n.starts_with(prefix))
                    })
                    .count()
            })
            .unwrap_or(0)
    };
    let (started, imported_torch) = (marked("started-"), marked("torch-"));
    let mut texts = Vec::new();
    let mut overlong = Vec::new();
    for f in files.drain(..) {
        let file = std::fs::File::open(&f)
            .map_err(|e| Error::io(format!("reading {}", f.display()), &e))?;
        let mut text = String::new();
        let mut reader = BufReader::new(file);
        let mut line = String::new();
        for number in 1.. {
            line.clear();
            let n = reader
                .by_ref()
                .take(trace::read::MAX_LINE as u64 + 1)
                .read_line(&mut line)
                .map_err(|e| Error::io(format!("reading {}", f.display()), &e))?;
            if n > trace::read::MAX_LINE {
                let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
                overlong.push((name.unwrap_or_default(), number));
                break;
            }
            // A process killed mid-line leaves an unfinished last line: not a record.
            if n == 0 || !line.ends_with('\n') {
                break;
            }
            text.push_str(&line);
        }
        texts.push(text);
    }
    texts.sort_by_key(|t| order_key(t));
    let mut all = Collected {
        overlong,
        started,
        imported_torch,
        ..Collected::default()
    };
    for t in texts {
        if (all.text.len() + t.len()) as u64 > MAX_BYTES {
            all.cut = true;
            break;
        }
        all.text.push_str(&t);
    }
    Ok(all)
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

/// Where `--trace` keeps the traces: checked before the command starts, so that nothing runs
/// for a trace that could not be kept, and written whole at the end (a temporary file renamed
/// into place). Only a regular file is ever replaced, and only when it is empty or a trace
/// mldebug wrote: a symbolic link is followed to the file it names (the link stays), and
/// anything else (a folder, a FIFO, a device, another file) is refused.
#[derive(Debug, Clone)]
pub struct Target {
    /// The path as the user gave it.
    pub shown: PathBuf,
    /// The file written: `shown`, or the file a symbolic link there names.
    file: PathBuf,
}

impl Target {
    /// Checks `path` before anything runs: what is there may be replaced, and its folder takes
    /// a new file.
    pub fn check(path: &Path) -> Result<Target> {
        let shown = path.display();
        let file = match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let parent = path.parent().filter(|d| !d.as_os_str().is_empty());
                if let Some(d) = parent.filter(|d| !d.is_dir()) {
                    return Err(Error::usage(format!(
                        "--trace {shown}: no such folder {}",
                        d.display()
                    )));
                }
                path.to_path_buf()
            }
            Err(e) => return Err(Error::io(format!("--trace {shown}"), &e)),
            Ok(m) if m.file_type().is_symlink() => {
                // What the link names, followed (a `/proc/self/fd/1` names a pipe or a terminal
                // that has no path to canonicalise).
                let meta = std::fs::metadata(path).map_err(|_| {
                    Error::usage(format!(
                        "--trace {shown}: a symbolic link to nothing; name a regular file"
                    ))
                })?;
                replaceable(path, &meta).map_err(|why| refused(path, &why))?;
                std::fs::canonicalize(path)
                    .map_err(|e| Error::io(format!("--trace {shown}"), &e))?
            }
            Ok(m) => {
                replaceable(path, &m).map_err(|why| refused(path, &why))?;
                path.to_path_buf()
            }
        };
        // The folder must take a new file: found now, not after the whole run.
        let tmp = crate::atomic_file::temp_path(&file);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => {
                drop(f);
                let _ = std::fs::remove_file(&tmp);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                let folder = file.parent().filter(|d| !d.as_os_str().is_empty());
                return Err(Error::io(
                    format!(
                        "--trace {shown}: cannot write a file in {} (nothing was run)",
                        folder.map_or(".".into(), |d| d.display().to_string())
                    ),
                    &e,
                ));
            }
        }
        Ok(Target {
            shown: path.to_path_buf(),
            file,
        })
    }

    /// Writes the traces (whole, then renamed into place), after checking again that what is
    /// there now may still be replaced.
    pub fn keep(&self, text: &str) -> Result<()> {
        let shown = self.shown.display();
        match std::fs::symlink_metadata(&self.file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(format!("--trace {shown}"), &e)),
            Ok(m) => replaceable(&self.file, &m).map_err(|why| {
                Error::new(
                    crate::Kind::Io,
                    format!(
                        "--trace {shown}: what is there now was put there during the run: {why}"
                    ),
                )
            })?,
        }
        crate::atomic_file::write(&self.file, text.as_bytes())
            .map_err(|e| Error::io(format!("writing {shown}"), &e))
    }
}

/// A `--trace` refused before the command starts.
fn refused(shown: &Path, why: &str) -> Error {
    Error::usage(format!(
        "--trace {}: {why} (nothing was run)",
        shown.display()
    ))
}

/// Whether the existing `file` (`meta` following any link) may be replaced by a trace: a
/// regular file, empty or a trace already. Else why not, in words.
fn replaceable(file: &Path, meta: &std::fs::Metadata) -> std::result::Result<(), String> {
    if meta.is_dir() {
        return Err("a folder; name a file".into());
    }
    if !meta.is_file() {
        return Err(format!(
            "{}, not a regular file; a trace is written to a regular file only",
            file_kind(meta)
        ));
    }
    if meta.len() == 0 || holds_a_trace(file) {
        return Ok(());
    }
    Err(
        "the file exists and is not a trace mldebug wrote, so it is not replaced; name a new \
         file, or remove this one first"
            .into(),
    )
}

/// What a file that is not a regular file is, in words.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() {
        "a folder"
    } else if meta.is_file() {
        "a regular file"
    } else {
        "a special file"
    }
}

/// Whether the file's first line is a `start` record mldebug wrote (a leading byte-order mark
/// aside): `"kind": "start"` with a whole-number `trace` version and a `pid`. A user's JSON
/// lines that merely mention those words are not.
pub fn holds_a_trace(file: &Path) -> bool {
    let Some(first) = crate::doctor::trace_read::first_line(file) else {
        return false;
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&first) else {
        return false;
    };
    v["kind"] == "start" && v["trace"].is_u64() && v["pid"].is_u64()
}

/// The processes in `text`; a line that does not read is an internal error (the probes wrote
/// it), naming the line.
pub fn parse(text: &str) -> Result<Vec<Process>> {
    trace::parse(text).map_err(|e| Error::internal(format!("the run's trace does not read: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "{\"kind\": \"start\", \"trace\": 1, \"pid\": 1}\n";

    #[test]
    fn an_unfinished_last_line_is_dropped_and_an_overlong_line_ends_its_process_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(
            d.join("trace-1.jsonl"),
            format!("{START}{{\"kind\": \"step\", \"step\": 1}}\n{{\"kind\": \"st"),
        )
        .unwrap();
        let long = "x".repeat(trace::read::MAX_LINE + 10);
        std::fs::write(
            d.join("trace-2.jsonl"),
            format!(
                "{}{{\"kind\": \"{long}\"}}\n{{\"kind\": \"end\"}}\n",
                START.replace("1}", "2}")
            ),
        )
        .unwrap();
        let c = collect(d).unwrap();
        assert!(!c.cut);
        assert_eq!(c.overlong, [("trace-2.jsonl".to_string(), 2)]);
        let processes = parse(&c.text).unwrap();
        assert_eq!(processes.len(), 2);
        assert_eq!(processes.iter().map(|p| p.steps.len()).sum::<usize>(), 1);
        assert!(processes.iter().all(|p| p.end.is_none()));
    }

    #[test]
    fn only_a_start_record_with_a_version_and_a_pid_is_a_trace() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x.jsonl");
        for (text, is) in [
            (START, true),
            ("\u{feff}{\"kind\":\"start\",\"trace\":1,\"pid\":3}\n", true),
            (
                "{\"kind\": \"start\", \"trace\": \"run-42\", \"pid\": 1}\n",
                false,
            ),
            ("{\"kind\": \"start\", \"trace\": 1}\n", false),
            (
                "{\"event\": \"start\", \"kind\": \"x\", \"trace\": 1, \"pid\": 1}\n",
                false,
            ),
            ("print('kind start trace')\n", false),
        ] {
            std::fs::write(&f, text).unwrap();
            assert_eq!(holds_a_trace(&f), is, "{text}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_trace_is_written_through_and_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("real.jsonl"), START).unwrap();
        std::os::unix::fs::symlink(d.join("real.jsonl"), d.join("link.jsonl")).unwrap();
        let t = Target::check(&d.join("link.jsonl")).unwrap();
        t.keep("new\n").unwrap();
        assert!(std::fs::symlink_metadata(d.join("link.jsonl"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            std::fs::read_to_string(d.join("real.jsonl")).unwrap(),
            "new\n"
        );
        // What changed between the check and the write is checked again.
        let t = Target::check(&d.join("fresh.jsonl")).unwrap();
        std::fs::write(d.join("fresh.jsonl"), "someone else's\n").unwrap();
        assert!(t.keep(START).is_err());
        assert_eq!(
            std::fs::read_to_string(d.join("fresh.jsonl")).unwrap(),
            "someone else's\n"
        );
        assert_eq!(std::fs::read_dir(d).unwrap().count(), 3);
    }
}
