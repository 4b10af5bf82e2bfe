//! The PyTorch zoo (`torch/zoo/`, embedded in the binary): clean models and buggy twins whose
//! verdicts `mldebug demo --torch` and the tests check, described by `torch/zoo/zoo.json`.

use crate::{Error, Result};
use mldebug_judge::matrix::MatrixModel;
use mldebug_report::CheckId;
use serde::Deserialize;
use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/embedded_torch_zoo.rs"));

/// The manifest's name inside the zoo.
pub const MANIFEST: &str = "zoo.json";

/// One model of the manifest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub name: String,
    /// `FILE.py:NAME` relative to the zoo, or `hf:DIR` relative to it.
    pub target: String,
    /// A `--lora` spec.
    #[serde(default)]
    pub lora: Option<String>,
    pub clean: bool,
    /// The checks it must fail (empty for a clean model).
    #[serde(default)]
    pub breaks: Vec<CheckId>,
    /// Python modules it needs beside torch (`transformers`, `peft`).
    #[serde(default)]
    pub needs: Vec<String>,
    /// The bug, in a few words.
    #[serde(default)]
    pub bug: Option<String>,
    #[serde(default)]
    pub twin_of: Option<String>,
}

impl Entry {
    /// The `--torch` value for a zoo unpacked at `dir`.
    pub fn spec(&self, dir: &Path) -> String {
        match self.target.strip_prefix("hf:") {
            Some(rest) => format!("hf:{}", dir.join(rest).display()),
            None => dir.join(&self.target).display().to_string(),
        }
    }

    pub fn matrix_model(&self) -> MatrixModel {
        MatrixModel {
            name: self.name.clone(),
            clean: self.clean,
            twin_of: self.twin_of.clone(),
            breaks: self.bug.clone().unwrap_or_else(|| {
                self.breaks
                    .iter()
                    .map(|c| c.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }),
            fails: self.breaks.clone(),
        }
    }
}

/// The embedded manifest.
pub fn manifest() -> Result<Vec<Entry>> {
    let text = TORCH_ZOO
        .iter()
        .find(|(p, _)| *p == MANIFEST)
        .map(|(_, t)| *t)
        .ok_or_else(|| Error::internal("this mldebug was built without torch/zoo/zoo.json"))?;
    serde_json::from_str(text).map_err(|e| Error::internal(format!("torch/zoo/{MANIFEST}: {e}")))
}

/// The embedded zoo written into a fresh private folder, removed when dropped.
pub struct Unpacked {
    pub dir: PathBuf,
}

impl Unpacked {
    pub fn new() -> Result<Unpacked> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("mldebug-torch-zoo-{}-{nanos}", std::process::id()));
        // create_dir, not create_dir_all: a folder someone else made there is refused.
        std::fs::create_dir(&dir).map_err(|e| Error::io(dir.display(), &e))?;
        let unpacked = Unpacked { dir };
        for (rel, text) in TORCH_ZOO {
            let path = unpacked.dir.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| Error::io(parent.display(), &e))?;
            }
            std::fs::write(&path, text).map_err(|e| Error::io(path.display(), &e))?;
        }
        Ok(unpacked)
    }
}

impl Drop for Unpacked {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
