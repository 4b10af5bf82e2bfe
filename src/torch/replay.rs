//! Kept driver measurements, for the test suite's PyTorch zoo: in a build with the
//! `torch-replay` feature (which only the tests turn on, through the package's dev-dependency on
//! itself; the shipped binary reads no such variable), with `MLDEBUG_TORCH_REPLAY` set, a driver
//! run that ended well keeps its stdout, and a later run with the same inputs reads the kept
//! lines instead of starting Python. Only the measurement is kept: the judgement, the report and
//! everything else in Rust run each time. Unset (every user), nothing is read or written.
//!
//! - A folder: each run is kept there, named by a hash of everything that produced it (the
//!   driver's sources, the request without its nonce, the interpreter's path, and the bytes of
//!   every file beside the model's file or in its Hugging Face folder).
//! - A path ending in `.jsonl`: that one file, read when it holds a run of the same request and
//!   written otherwise. What else it stands for (the driver, the model, torch) is the caller's
//!   to know: the test suite's committed torch-zoo fixtures are such files, keyed by the test.
//!
//! A kept file's first line is a JSON object: the nonce its lines were written with and the
//! request (`Head`; other keys, a caller's, are left alone); every other line is one the
//! driver wrote. A developer's knob, not a cache for users: a model that imports code from
//! elsewhere, or reads data files outside its folder, is not covered by the hash.

use super::target::Target;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The variable that names the folder or the file.
#[cfg(feature = "torch-replay")]
pub const VARIABLE: &str = "MLDEBUG_TORCH_REPLAY";

/// Where a run with these inputs is kept: nowhere, in a build without the `torch-replay` feature.
#[cfg(not(feature = "torch-replay"))]
pub fn kept(_: &str, _: &str, _: &Path, _: &Target) -> Option<PathBuf> {
    None
}

/// Where a run with these inputs is kept, when the variable is set: the file it names, or a
/// file in the folder it names.
#[cfg(feature = "torch-replay")]
pub fn kept(
    sources: &str,
    request_without_nonce: &str,
    python: &Path,
    target: &Target,
) -> Option<PathBuf> {
    let dir = std::env::var_os(VARIABLE).filter(|v| !v.is_empty())?;
    if Path::new(&dir).extension().is_some_and(|e| e == "jsonl") {
        return Some(PathBuf::from(dir));
    }
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

/// A kept file's first line.
#[derive(Serialize, Deserialize)]
struct Head {
    /// The nonce every kept line was written with.
    nonce: String,
    /// The request the run answered, as [`comparable`] writes it.
    request: serde_json::Value,
}

/// The request without its nonce, its model's path relative to the current folder where it lies
/// under it, so that a kept file read in another clone of the same folder still matches.
fn comparable(request_without_nonce: &str) -> serde_json::Value {
    let mut value: serde_json::Value =
        serde_json::from_str(request_without_nonce).unwrap_or_default();
    if let Some(o) = value.as_object_mut() {
        o.remove("nonce");
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    if let Some(path) = value.pointer_mut("/target/path") {
        let relative = path
            .as_str()
            .and_then(|p| Path::new(p).strip_prefix(&cwd).ok())
            .map(|p| p.to_string_lossy().into_owned());
        if let Some(r) = relative {
            *path = serde_json::Value::String(r);
        }
    }
    value
}

/// The kept stdout lines, each with `nonce` in place of the one it was kept with; nothing when
/// the file was kept for another request (or is not a kept file).
pub fn read(path: &Path, nonce: &str, request_without_nonce: &str) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let head: Head = serde_json::from_str(lines.next()?).ok()?;
    if head.nonce.is_empty() || head.request != comparable(request_without_nonce) {
        return None;
    }
    Some(lines.map(|l| l.replace(&head.nonce, nonce)).collect())
}

/// Keeps `lines` (written with `nonce`, answering the request) at `path`; a failure to write only
/// means no reuse.
pub fn keep(path: &Path, nonce: &str, request_without_nonce: &str, lines: &[String]) {
    let head = Head {
        nonce: nonce.to_string(),
        request: comparable(request_without_nonce),
    };
    let Ok(mut text) = serde_json::to_string(&head) else {
        return;
    };
    text.push('\n');
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
    fn kept_lines_come_back_with_the_new_nonce_for_the_same_request_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k.jsonl");
        let request = r#"{"contract":2,"nonce":"","seed":0,"steps":30}"#;
        keep(
            &p,
            "old-123",
            request,
            &["{\"event\":\"done\",\"nonce\":\"old-123\"}".into()],
        );
        let back = read(&p, "new-456", request).unwrap();
        assert_eq!(back, ["{\"event\":\"done\",\"nonce\":\"new-456\"}"]);
        let other = r#"{"contract":2,"nonce":"","seed":0,"steps":31}"#;
        assert_eq!(read(&p, "new-456", other), None);
        // A file of the older layout (its first line the bare nonce) is not read.
        std::fs::write(&p, "old-123\n{\"event\":\"done\",\"nonce\":\"old-123\"}\n").unwrap();
        assert_eq!(read(&p, "new-456", request), None);
    }

    #[test]
    fn the_model_path_is_compared_relative_to_the_current_folder() {
        let cwd = std::env::current_dir().unwrap();
        let request = |path: &Path| {
            serde_json::json!({"nonce": "", "target": {"kind": "hf", "path": path}}).to_string()
        };
        let inside = comparable(&request(&cwd.join("torch/zoo/hf/x")));
        assert_eq!(inside["target"]["path"], "torch/zoo/hf/x");
        assert!(inside.get("nonce").is_none());
        let outside = comparable(&request(Path::new("/elsewhere/x")));
        assert_eq!(outside["target"]["path"], "/elsewhere/x");
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
