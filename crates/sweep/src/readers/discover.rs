//! From the paths on the command line to a list of run sources: globs expanded, directories
//! walked, each run recognised by the shape of its files.

use crate::{Error, Result};
use std::fs;
use std::path::{Path, PathBuf};

/// One unit a reader turns into runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// `*.json`: our run object(s), a W&B API dump, or `trainer_state.json`.
    Json(PathBuf),
    /// `*.jsonl`: run objects or rows, one per line.
    Jsonl(PathBuf),
    /// TensorBoard event files of one run: a directory, and its event files grouped by the
    /// split sub-directory they came from (Keras writes `train/` and `validation/`), whose name
    /// prefixes the tags.
    TfEvents {
        /// The run's directory.
        dir: PathBuf,
        /// Event files by split sub-directory (`None`: the directory itself).
        parts: Vec<(Option<String>, Vec<PathBuf>)>,
    },
    /// A CSV file: Lightning `CSVLogger` `metrics.csv` (with `hparams.yaml` beside it), or a W&B
    /// runs-table or line-panel export.
    Csv(PathBuf),
    /// A W&B run directory (`run-…` / `offline-run-…`, with `files/` or `run-<id>.wandb`).
    WandbDir(PathBuf),
    /// An MLflow file-store run directory (`meta.yaml` and `metrics/`).
    MlflowRun(PathBuf),
    /// An MLflow SQLite tracking store.
    MlflowDb(PathBuf),
}

impl Source {
    /// The file or directory to name in messages.
    pub fn path(&self) -> &Path {
        match self {
            Source::Json(p)
            | Source::Jsonl(p)
            | Source::Csv(p)
            | Source::WandbDir(p)
            | Source::MlflowRun(p)
            | Source::MlflowDb(p) => p,
            Source::TfEvents { dir, .. } => dir,
        }
    }
}

/// A source, where it was found, and which command-line path it came from.
#[derive(Debug, Clone)]
pub struct Job {
    /// The source to read.
    pub source: Source,
    /// The directory the user named, when the source was found by walking it.
    pub root: Option<PathBuf>,
    /// The index of the command-line path (after glob expansion) it came from.
    pub origin: usize,
}

/// The formats tried, for "unknown format" and "no runs found" messages.
pub const TRIED: &str = "*.json / *.jsonl (run objects, W&B API dumps, HF trainer_state.json), \
     W&B run directories (run-*/, offline-run-*/ with files/), MLflow mlruns/ and mlflow.db, \
     TensorBoard events.out.tfevents.*, Lightning metrics.csv, W&B CSV exports (*.csv)";

/// Directory names never walked into.
const SKIP_DIRS: [&str; 3] = ["__pycache__", "node_modules", "site-packages"];

/// Sub-directories whose event files belong to the run above them (Keras' `TensorBoard`
/// callback writes `train/` and `validation/`).
const SPLIT_DIRS: [&str; 5] = ["train", "validation", "val", "eval", "test"];

/// Where the HF Trainer writes its TensorBoard logs by default (`<output_dir>/runs/<date>_<host>`):
/// the same run as the `trainer_state.json` beside it.
const HF_LOGGING_DIR: &str = "runs";

/// The leading bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// A command-line path after glob expansion, and whether it is a directory (one `stat` each).
#[derive(Debug, Clone)]
pub struct Input {
    pub path: PathBuf,
    pub is_dir: bool,
}

/// Expands the command-line paths: globs (for shells that leave them unexpanded) and existence.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<Input>> {
    let mut out = Vec::new();
    for p in paths {
        match fs::metadata(p) {
            Ok(meta) => {
                out.push(Input {
                    path: p.clone(),
                    is_dir: regular_or_dir(p, &meta)?,
                });
                continue;
            }
            // A link that exists but cannot be followed (a loop, a dangling target).
            Err(e) if fs::symlink_metadata(p).is_ok() => {
                return Err(Error::usage(format!(
                    "{}: a symbolic link that cannot be followed: {e}",
                    p.display()
                )));
            }
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::usage(format!("{}: cannot read: {e}", p.display())));
            }
            Err(_) => {}
        }
        let s = p.to_string_lossy();
        if !super::walk::is_pattern(&s) {
            return Err(Error::usage(format!(
                "{}: no such file or directory",
                p.display()
            )));
        }
        let before = out.len();
        for path in super::walk::glob(&s)? {
            let Ok(meta) = fs::metadata(&path) else {
                continue; // removed since it matched
            };
            let is_dir = regular_or_dir(&path, &meta)?;
            out.push(Input { path, is_dir });
        }
        if out.len() == before {
            return Err(Error::usage(format!("{s}: no file matches this pattern")));
        }
    }
    Ok(out)
}

/// Whether a command-line path is a directory; a FIFO, socket or device is refused (reading one
/// would block or never end).
fn regular_or_dir(p: &Path, meta: &fs::Metadata) -> Result<bool> {
    if meta.is_dir() || meta.is_file() {
        return Ok(meta.is_dir());
    }
    Err(Error::usage(format!(
        "{}: not a regular file or a directory (a pipe, socket or device); run files are read from files",
        p.display()
    )))
}

/// The sources under each path. A file must be recognisable; a directory is walked.
pub fn discover(inputs: &[Input]) -> Result<Vec<Job>> {
    let mut jobs = Vec::new();
    for (origin, input) in inputs.iter().enumerate() {
        let p = &input.path;
        if input.is_dir {
            let mut found = Vec::new();
            walk(p, false, &mut Walked::default(), &mut found)?;
            jobs.extend(found.into_iter().map(|source| Job {
                source,
                root: Some(p.clone()),
                origin,
            }));
        } else {
            jobs.push(Job {
                source: classify_file(p)?,
                root: None,
                origin,
            });
        }
    }
    Ok(jobs)
}

/// A file named on the command line: by its name, else by its first bytes.
fn classify_file(p: &Path) -> Result<Source> {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let parent = p.parent().unwrap_or(Path::new("."));
    if name.starts_with("events.out.tfevents") {
        return Ok(Source::TfEvents {
            dir: parent.to_path_buf(),
            parts: vec![(None, vec![p.to_path_buf()])],
        });
    }
    if name.starts_with("run-") && name.ends_with(".wandb") {
        return Ok(Source::WandbDir(parent.to_path_buf()));
    }
    if name == "wandb-summary.json" && parent.file_name().is_some_and(|n| n == "files") {
        if let Some(run_dir) = parent.parent() {
            return Ok(Source::WandbDir(run_dir.to_path_buf()));
        }
    }
    if name == "meta.yaml" && parent.join("metrics").is_dir() {
        return Ok(Source::MlflowRun(parent.to_path_buf()));
    }
    match p.extension().and_then(|e| e.to_str()) {
        Some("json") => return Ok(Source::Json(p.to_path_buf())),
        Some("jsonl" | "ndjson") => return Ok(Source::Jsonl(p.to_path_buf())),
        Some("csv") => return Ok(Source::Csv(p.to_path_buf())),
        Some("db" | "sqlite" | "sqlite3") => return Ok(Source::MlflowDb(p.to_path_buf())),
        _ => {}
    }
    let head = read_head(p)?;
    if head.starts_with(SQLITE_MAGIC) {
        return Ok(Source::MlflowDb(p.to_path_buf()));
    }
    if super::tfevents::looks_like_tfrecord(&head) {
        return Ok(Source::TfEvents {
            dir: parent.to_path_buf(),
            parts: vec![(None, vec![p.to_path_buf()])],
        });
    }
    match head.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') if head.contains(&b'\n') && looks_like_jsonl(&head) => {
            Ok(Source::Jsonl(p.to_path_buf()))
        }
        Some(b'{' | b'[') => Ok(Source::Json(p.to_path_buf())),
        _ => Err(Error::input(
            p,
            "format",
            format_args!("unknown format; tried by name and content: {TRIED}"),
        )),
    }
}

/// The first bytes of a file, for sniffing.
fn read_head(p: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(512);
    fs::File::open(p)
        .and_then(|f| f.take(512).read_to_end(&mut head))
        .map_err(|e| Error::usage(format!("{}: cannot read: {e}", p.display())))?;
    Ok(head)
}

/// Whether the first line is a complete JSON object on its own.
fn looks_like_jsonl(head: &[u8]) -> bool {
    let first = head.split(|&b| b == b'\n').next().unwrap_or_default();
    serde_json::from_slice::<serde::de::IgnoredAny>(first).is_ok()
}

/// Whether a CSV file found in a directory is a W&B UI export, by its header line (other CSV
/// files in a run folder are data, not runs, and are not read).
fn is_wandb_export(p: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::with_capacity(4096);
    if fs::File::open(p)
        .and_then(|f| f.take(64 * 1024).read_to_end(&mut head))
        .is_err()
    {
        return false;
    }
    let first = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let Ok(text) = std::str::from_utf8(first) else {
        return false;
    };
    match super::csv::parse(p, text.trim_end_matches('\r')) {
        Ok(records) => records.first().is_some_and(|h| {
            super::wandb_csv::is_runs_table(&h.cells) || super::wandb_csv::is_line_panel(&h.cells)
        }),
        Err(_) => false,
    }
}

/// `run-<date>_<time>-<id>/` or `offline-run-…/`, with `files/` or the `run-<id>.wandb` log.
fn is_wandb_run_dir(dir: &Path) -> bool {
    let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    if !(name.starts_with("run-") || name.starts_with("offline-run-")) {
        return false;
    }
    let id = name.rsplit_once('-').map_or(name, |(_, id)| id);
    dir.join("files").is_dir() || dir.join(format!("run-{id}.wandb")).is_file()
}

fn is_mlflow_run_dir(dir: &Path) -> bool {
    dir.join("meta.yaml").is_file() && dir.join("metrics").is_dir()
}

/// `checkpoint-N` → N.
fn checkpoint_number(name: &str) -> Option<u64> {
    name.strip_prefix("checkpoint-")?.parse().ok()
}

/// What one directory walk has entered: each real directory once (a bind mount or a link into
/// a folder already walked is not walked again), never deeper than [`super::walk::MAX_DEPTH`].
#[derive(Default)]
struct Walked {
    entered: std::collections::HashSet<super::walk::FileId>,
    depth: usize,
}

/// Walks `dir`, appending the sources found in a stable (sorted) order. `skip_trainer_state` is
/// set for HF `checkpoint-N` directories whose `trainer_state.json` repeats the run's final one.
fn walk(
    dir: &Path,
    skip_trainer_state: bool,
    walked: &mut Walked,
    out: &mut Vec<Source>,
) -> Result<()> {
    let Ok(meta) = fs::metadata(dir) else {
        return Ok(()); // removed since it was listed
    };
    if walked.depth > super::walk::MAX_DEPTH
        || !walked.entered.insert(super::walk::file_id(dir, &meta))
    {
        return Ok(());
    }
    if is_wandb_run_dir(dir) {
        out.push(Source::WandbDir(dir.to_path_buf()));
        return Ok(());
    }
    if is_mlflow_run_dir(dir) {
        out.push(Source::MlflowRun(dir.to_path_buf()));
        return Ok(());
    }
    let entries =
        list_dir(dir).map_err(|e| Error::usage(format!("{}: cannot read: {e}", dir.display())))?;

    let has_trainer_state = entries
        .iter()
        .any(|(n, _, ft)| ft.is_file() && n == "trainer_state.json");
    // Without a final trainer_state.json, the newest checkpoint's is the run's.
    let newest_checkpoint = if has_trainer_state {
        None
    } else {
        entries
            .iter()
            .filter(|(n, p, ft)| {
                ft.is_dir()
                    && p.join("trainer_state.json").is_file()
                    && checkpoint_number(n).is_some()
            })
            .max_by_key(|(n, ..)| checkpoint_number(n))
            .map(|(n, ..)| n.clone())
    };

    let mut events = Vec::new();
    for (name, path, ft) in &entries {
        if ft.is_file() {
            if name.starts_with("events.out.tfevents") {
                events.push(path.clone());
            } else if name == "metrics.csv" || (name.ends_with(".csv") && is_wandb_export(path)) {
                out.push(Source::Csv(path.clone()));
            } else if name == "mlflow.db" {
                out.push(Source::MlflowDb(path.clone()));
            } else if name.ends_with(".jsonl") || name.ends_with(".ndjson") {
                out.push(Source::Jsonl(path.clone()));
            } else if name.ends_with(".json") {
                if name == "trainer_state.json" && skip_trainer_state {
                    continue;
                }
                out.push(Source::Json(path.clone()));
            }
        }
    }
    if !events.is_empty() {
        out.push(Source::TfEvents {
            dir: dir.to_path_buf(),
            parts: vec![(None, events)],
        });
    }
    for (name, path, ft) in &entries {
        if !ft.is_dir() || name.starts_with('.') || SKIP_DIRS.contains(&name.as_str()) {
            continue;
        }
        if has_trainer_state && name == HF_LOGGING_DIR {
            // The HF Trainer's TensorBoard copy of the history trainer_state.json holds.
            continue;
        }
        let skip_state = checkpoint_number(name).is_some()
            && newest_checkpoint.as_deref() != Some(name.as_str());
        let before = out.len();
        walked.depth += 1;
        let walked_child = walk(path, skip_state, walked, out);
        walked.depth -= 1;
        walked_child?;
        merge_child(dir, name, before, out);
    }
    Ok(())
}

/// A directory's entries sorted by name, symlinks to files resolved. Symlinked directories are
/// left out: W&B's `latest-run` would read a run twice.
fn list_dir(dir: &Path) -> std::io::Result<Vec<(String, PathBuf, fs::FileType)>> {
    let mut entries = Vec::new();
    for e in fs::read_dir(dir)? {
        let e = e?;
        let mut ft = e.file_type()?;
        if ft.is_symlink() {
            match fs::metadata(e.path()) {
                Ok(m) if m.is_file() => ft = m.file_type(),
                _ => continue,
            }
        }
        entries.push((e.file_name().to_string_lossy().into_owned(), e.path(), ft));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(entries)
}

/// Folds the event files of a sub-directory into the run above it: a split (`run/train/`),
/// whose name becomes the tag prefix, or any sub-directory of a directory that has event files
/// of its own (PyTorch's `add_hparams` writes its hyperparameters into `run/<timestamp>/`).
fn merge_child(dir: &Path, name: &str, from: usize, out: &mut Vec<Source>) {
    let child = dir.join(name);
    let parent_has_events = out[..from]
        .iter()
        .any(|s| matches!(s, Source::TfEvents { dir: d, .. } if d == dir));
    let prefix = if SPLIT_DIRS.contains(&name) {
        Some(name.to_string())
    } else if parent_has_events {
        None
    } else {
        return;
    };
    let Some(pos) = out[from..]
        .iter()
        .position(|s| matches!(s, Source::TfEvents { dir: d, .. } if *d == child))
    else {
        return;
    };
    let Source::TfEvents { parts, .. } = out.remove(from + pos) else {
        unreachable!("matched above")
    };
    let parts = parts.into_iter().map(|(p, files)| {
        let joined = match (&prefix, p) {
            (Some(a), Some(b)) => Some(format!("{a}/{b}")),
            (a, b) => a.clone().or(b),
        };
        (joined, files)
    });
    let existing = out.iter_mut().find_map(|s| match s {
        Source::TfEvents { dir: d, parts } if d == dir => Some(parts),
        _ => None,
    });
    match existing {
        Some(existing) => existing.extend(parts),
        None => out.push(Source::TfEvents {
            dir: dir.to_path_buf(),
            parts: parts.collect(),
        }),
    }
}
