//! Measurements a rerun may reuse. Watching a training script costs a Python start and 30
//! optimizer steps; judging what was watched costs milliseconds. So the run zoo keeps each
//! script's trace under `target/test-cache/`, keyed by everything that produces it (the
//! script and its folder, the probes, the launcher's sources, the interpreter, the seed and
//! the command), and a rerun whose key is unchanged judges the kept trace again with the
//! binary under test (`mldebug doctor TRACE`, the same judgement as `mldebug run`). A change
//! to the judgement, the report or anything else in Rust outside the launcher is tested on
//! every run; a change to what is measured measures again. A fresh clone (CI) has no cache
//! and runs everything; `MLDEBUG_TEST_RERUN=1` ignores the cache.

use super::support::{python, repo};
use std::path::{Path, PathBuf};

/// Whether kept measurements may be reused.
pub fn enabled() -> bool {
    std::env::var_os("MLDEBUG_TEST_RERUN").is_none_or(|v| v.is_empty() || v == "0")
}

/// The folder kept measurements live in.
pub fn dir(kind: &str) -> PathBuf {
    repo().join("target").join("test-cache").join(kind)
}

/// A hash of the test Python's path and of every file under `paths` (relative to the
/// repository: path and bytes, in path order; `__pycache__` left out).
pub fn inputs_hash(paths: &[&str]) -> u64 {
    files_hash(paths, python().to_string_lossy().as_bytes())
}

/// A hash of `salt` and of every file under `paths` (as [`inputs_hash`], without Python).
pub fn files_hash(paths: &[&str], salt: &[u8]) -> u64 {
    let mut files = Vec::new();
    for p in paths {
        collect(&repo().join(p), &mut files);
    }
    files.sort();
    let mut bytes = salt.to_vec();
    for f in files {
        bytes.extend_from_slice(
            f.strip_prefix(repo())
                .unwrap_or(&f)
                .to_string_lossy()
                .as_bytes(),
        );
        bytes.push(0);
        bytes.extend_from_slice(&std::fs::read(&f).unwrap_or_default());
        bytes.push(0);
    }
    mldebug_text::hash::fnv1a(&bytes)
}

fn collect(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        if p.file_name().is_some_and(|n| n == "__pycache__") {
            return;
        }
        for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
            collect(&e.path(), out);
        }
    } else if p.is_file() {
        out.push(p.to_path_buf());
    }
}

/// Writes `bytes` at `to`, its folder made if need be, through the binary's own atomic writer
/// (temporary file + rename), so a reader never sees half a file; a failure only means the
/// measurement is taken again next time.
pub fn write(to: &Path, bytes: &[u8]) {
    if let Some(parent) = to.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    // Not a failure of the test (the measurement is only not kept), but said: a kept file
    // that can never be written (a name past the file system's limit) costs every rerun.
    if let Err(e) = mldebug::atomic_file::write(to, bytes) {
        eprintln!("test cache: could not keep {}: {e}", to.display());
    }
}

/// Keeps the file `from` as `to` ([`write`]).
pub fn keep(from: &Path, to: &Path) {
    if let Ok(bytes) = std::fs::read(from) {
        write(to, &bytes);
    }
}
