//! Kept driver measurements, for the test suite's PyTorch zoo: in a build with the
//! `torch-replay` feature (which only the tests turn on, through the package's dev-dependency on
//! itself; the shipped binary reads no such variable), with `MLDEBUG_TORCH_REPLAY` set to a folder, a driver run that ended well keeps its stdout there, named by a hash of
//! everything that produced it (the driver's sources, the request without its nonce, the
//! interpreter's path, and the bytes of every file beside the model's file or in its Hugging
//! Face folder); a later run with the same hash reads the kept lines instead of starting
//! Python. Only the measurement is kept: the judgement, the report and everything else in Rust
//! run each time. Unset (every user), nothing is read or written. A developer's knob, not a
//! cache for users: a model that imports code from elsewhere, or reads data files outside its
//! folder, is not covered by the hash.

use super::target::Target;
use std::path::{Path, PathBuf};

/// The variable that names the folder.
#[cfg(feature = "torch-replay")]
pub const VARIABLE: &str = "MLDEBUG_TORCH_REPLAY";

/// Where a run with these inputs is kept: nowhere, in a build without the `torch-replay` feature.
#[cfg(not(feature = "torch-replay"))]
pub fn kept(_: &str, _: &str, _: &Path, _: &Target) -> Option<PathBuf> {
    None
}

/// Where a run with these inputs is kept, when the variable is set.
#[cfg(feature = "torch-replay")]
pub fn kept(
    sources: &str,
    request_without_nonce: &str,
    python: &Path,
    target: &Target,
) -> Option<PathBuf> {
    let dir = std::env::var_os(VARIABLE).filter(|v| !v.is_empty())?;
    Some(kept_in(
        Path::new(&dir),
        sources,
        request_without_nonce,
        python,
        target,
    ))
}

/// [`kept`], in `dir`.
#[cfg(any(feature = "torch-replay", test))]
fn kept_in(
    dir: &Path,
    sources: &str,
    request_without_nonce: &str,
    python: &Path,
    target: &Target,
) -> PathBuf {
    let mut bytes = Vec::new();
    for part in [sources, request_without_nonce, &python.to_string_lossy()] {
        bytes.extend_from_slice(part.as_bytes());
        bytes.push(0);
    }
    let folder = match target {
        Target::File { path, .. } => path.parent().map(Path::to_path_buf),
        Target::Hf { path } if path.is_dir() => Some(path.clone()),
        Target::Hf { path } => path.parent().map(Path::to_path_buf),
    };
    if let Some(folder) = folder {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        for f in files {
            bytes.extend_from_slice(f.to_string_lossy().as_bytes());
            bytes.push(0);
            bytes.extend_from_slice(&std::fs::read(&f).unwrap_or_default());
            bytes.push(0);
        }
    }
    dir.join(format!("{:016x}.jsonl", mldebug_text::hash::fnv1a(&bytes)))
}

/// The kept stdout lines, each with `nonce` in place of the one it was kept with.
pub fn read(path: &Path, nonce: &str) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let kept_nonce = lines.next()?;
    if kept_nonce.is_empty() {
        return None;
    }
    Some(lines.map(|l| l.replace(kept_nonce, nonce)).collect())
}

/// Keeps `lines` (written with `nonce`) at `path`; a failure to write only means no reuse.
pub fn keep(path: &Path, nonce: &str, lines: &[String]) {
    let mut text = format!("{nonce}\n");
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = crate::atomic_file::write(path, text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_lines_come_back_with_the_new_nonce() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k.jsonl");
        keep(
            &p,
            "old-123",
            &["{\"event\":\"done\",\"nonce\":\"old-123\"}".into()],
        );
        let back = read(&p, "new-456").unwrap();
        assert_eq!(back, ["{\"event\":\"done\",\"nonce\":\"new-456\"}"]);
    }

    #[test]
    fn the_hash_follows_the_request_and_the_model_folder() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("m.py");
        std::fs::write(&model, "a").unwrap();
        let target = Target::File {
            path: model.clone(),
            name: "M".into(),
        };
        let py = Path::new("/usr/bin/python3");
        let at = |req: &str| kept_in(dir.path(), "src", req, py, &target);
        let a = at("req");
        assert_eq!(a, at("req"));
        assert_ne!(a, at("req2"));
        assert_ne!(a, kept_in(dir.path(), "src2", "req", py, &target));
        std::fs::write(dir.path().join("helper.py"), "b").unwrap();
        assert_ne!(a, at("req"));
    }
}
