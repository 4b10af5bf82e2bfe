//! One JSON file: our run object, a list of run objects (a W&B project dump), a single W&B API
//! dump, or an HF `trainer_state.json`.

use super::cells::{json_error, sanitize_nonfinite};
use super::identity::{dir_run_name, file_stem};
use super::run_object::Document;
use super::Found;
use crate::{Error, Result};
use std::path::Path;

/// What a JSON file must contain to be a run (for the "not a run file" message).
pub const JSON_SHAPES: &str = "a run object with \"metrics\", \"summary\" or \"history\", a list \
     of such objects, or an HF trainer_state.json with \"log_history\"";

pub fn read(path: &Path, bytes: &[u8], root: Option<&Path>) -> Result<Found> {
    let clean = sanitize_nonfinite(bytes);
    let doc: Document = serde_json::from_slice(&clean).map_err(|e| json_error(path, &e, 0))?;
    match doc {
        Document::One(run) => {
            if !run.is_run() {
                return Ok(Found::NotARun(format!("JSON, but not {JSON_SHAPES}")));
            }
            let fallback = if run.log_history.is_some() {
                // trainer_state.json sits in the output directory (or a checkpoint-N inside it).
                path.parent()
                    .map(|d| dir_run_name(d, root))
                    .unwrap_or_else(|| file_stem(path))
            } else {
                walked_name(path, root)
            };
            Ok(Found::Runs(vec![run.into_record(
                path,
                root,
                String::new(),
                fallback,
                true,
            )]))
        }
        Document::Many(runs) => {
            if runs.is_empty() || !runs.iter().any(|r| r.is_run()) {
                return Ok(Found::NotARun(format!(
                    "a JSON list, but not {JSON_SHAPES}"
                )));
            }
            let stem = walked_name(path, root);
            let mut out = Vec::with_capacity(runs.len());
            for (i, run) in runs.into_iter().enumerate() {
                let place = format!("item {}", i + 1);
                if !run.is_run() {
                    return Err(Error::input(
                        path,
                        &place,
                        "this list item is not a run object (no \"metrics\", \"summary\" or \"history\")",
                    ));
                }
                out.push(run.into_record(path, root, place, format!("{stem} #{}", i + 1), false));
            }
            Ok(Found::Runs(out))
        }
    }
}

/// A run file's name for a run that names itself nowhere: its path below the directory the user
/// named, without the extension (`seed1/run`), or its stem when named directly.
fn walked_name(path: &Path, root: Option<&Path>) -> String {
    match root.and_then(|r| path.strip_prefix(r).ok()) {
        Some(rel) => rel.with_extension("").to_string_lossy().into_owned(),
        None => file_stem(path),
    }
}
