//! `--batch FILE.safetensors`: read the file's header (no tensor data) to check that it holds
//! `input` and `targets`, and to tell the task from the targets: integer `[N, T]` is a causal LM,
//! integer `[N]` a classifier, floats a regression.
//!
//! Not for: loading the tensors (the harness does that, `mldebug_diagnostics::harness`).

use crate::{Error, Result};
use mldebug_diagnostics::Task;
use std::io::Read;
use std::path::Path;

/// The largest header a safetensors file may declare (its own format caps it at 100 MB).
const MAX_HEADER: u64 = 100_000_000;

/// The task the batch in `path` implies; a usage error names the file and what is wrong.
pub fn task_of(path: &Path) -> Result<Task> {
    let header = read_header(path)?;
    let entry = |name: &str| {
        header.get(name).ok_or_else(|| {
            let mut names: Vec<&str> = header
                .as_object()
                .map(|o| {
                    o.keys()
                        .map(String::as_str)
                        .filter(|k| *k != "__metadata__")
                        .collect()
                })
                .unwrap_or_default();
            names.sort_unstable();
            Error::input(
                path,
                "header",
                format!(
                    "no tensor named `{name}` (it holds {}); save the model's input as `input` \
                     and its labels as `targets`",
                    names.join(", ")
                ),
            )
        })
    };
    entry("input")?;
    let targets = entry("targets")?;
    let dtype = targets["dtype"].as_str().unwrap_or("");
    let rank = targets["shape"].as_array().map_or(0, Vec::len);
    Ok(match (dtype, rank) {
        ("F16" | "BF16" | "F32" | "F64", _) => Task::Regression,
        (_, 0 | 1) => Task::Classification,
        _ => Task::CausalLm,
    })
}

fn read_header(path: &Path) -> Result<serde_json::Value> {
    let mut f = std::fs::File::open(path)
        .map_err(|e| Error::usage(format!("--batch {}: cannot open it: {e}", path.display())))?;
    let mut len = [0u8; 8];
    f.read_exact(&mut len)
        .map_err(|_| Error::input(path, "byte 0", "too short to be a safetensors file"))?;
    let n = u64::from_le_bytes(len);
    if n > MAX_HEADER {
        return Err(Error::input(
            path,
            "byte 0",
            format!("declares a {n}-byte header; not a safetensors file"),
        ));
    }
    let mut buf = Vec::with_capacity(n as usize);
    f.take(n)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io(path.display(), &e))?;
    if buf.len() as u64 != n {
        return Err(Error::input(path, "header", "cut short"));
    }
    serde_json::from_slice(&buf).map_err(|e| {
        Error::input(
            path,
            format!("header, column {}", e.column()),
            format!("not JSON: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header.as_bytes());
        std::fs::write(f.path(), bytes).unwrap();
        f
    }

    #[test]
    fn the_targets_tell_the_task() {
        let lm = file(
            r#"{"input":{"dtype":"U32","shape":[2,3],"data_offsets":[0,0]},
                "targets":{"dtype":"I64","shape":[2,3],"data_offsets":[0,0]}}"#,
        );
        assert_eq!(task_of(lm.path()).unwrap(), Task::CausalLm);
        let cls = file(
            r#"{"input":{"dtype":"F32","shape":[2,3],"data_offsets":[0,0]},
                "targets":{"dtype":"I64","shape":[2],"data_offsets":[0,0]}}"#,
        );
        assert_eq!(task_of(cls.path()).unwrap(), Task::Classification);
    }

    #[test]
    fn missing_tensors_and_broken_files_are_usage_errors_naming_the_file() {
        let f = file(r#"{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,0]}}"#);
        let e = task_of(f.path()).unwrap_err();
        assert_eq!(e.exit(), crate::Exit::Usage);
        assert!(
            e.message.contains("no tensor named `input` (it holds x)"),
            "{}",
            e.message
        );
        let f = file("{not json");
        let e = task_of(f.path()).unwrap_err();
        assert!(
            e.message.contains(&f.path().display().to_string()),
            "{}",
            e.message
        );
        let short = tempfile::NamedTempFile::new().unwrap();
        assert!(task_of(short.path()).is_err());
    }
}
