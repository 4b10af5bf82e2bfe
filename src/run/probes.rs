//! The run probes (`torch/run/`, embedded at build time) written into a private folder for one
//! run, and the environment that points the command's Python processes at them. The folder is
//! made under the system's temporary folder (never the user's), readable by the user alone, and
//! removed when the run is over.

use super::window::{Steps, CYCLE_CAP_SECONDS, VERDICT_STEP};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/embedded_run_probes.rs"));

/// The trace contract version the probes write and `mldebug_doctor::trace` reads: its one
/// definition is the reader's, handed to the probes in `MLDEBUG_RUN_CONTRACT`.
pub const CONTRACT: u32 = mldebug_doctor::trace::records::TRACE_VERSION;

/// The variable naming the run's private folder: the probes write their traces there, and every
/// process the run starts inherits it (the guard finds strays by it).
pub const RUN_DIR_VARIABLE: &str = "MLDEBUG_RUN_DIR";

/// A private folder holding the probes and, once the command has run, its traces.
#[derive(Debug)]
pub struct ProbeDir {
    path: PathBuf,
}

impl ProbeDir {
    /// Makes the folder and writes every probe file into it.
    pub fn create() -> Result<ProbeDir> {
        let base = std::env::temp_dir();
        let path = unique_dir(&base)?;
        let dir = ProbeDir { path };
        for (rel, text) in RUN_PROBES {
            let dest = dir.path.join(rel);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| Error::io(format!("creating {}", parent.display()), &e))?;
            }
            std::fs::write(&dest, text)
                .map_err(|e| Error::io(format!("writing {}", dest.display()), &e))?;
        }
        Ok(dir)
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The environment the command runs with: the probes first on `PYTHONPATH` (the user's own
    /// entries after them), where to write traces, and what to observe: a fixed number of
    /// steps, or one cycle of the program within its caps (`torch/run/mldebug_run/window.py`).
    pub fn environment(&self, steps: Steps) -> Vec<(String, String)> {
        let own = self.path.display().to_string();
        let path = match std::env::var("PYTHONPATH") {
            Ok(p) if !p.is_empty() => format!("{own}:{p}"),
            _ => own.clone(),
        };
        let mut env = vec![
            ("PYTHONPATH".into(), path),
            (RUN_DIR_VARIABLE.into(), own),
            ("MLDEBUG_RUN_STEPS".into(), steps.limit().to_string()),
            ("MLDEBUG_RUN_CONTRACT".into(), CONTRACT.to_string()),
        ];
        if steps == Steps::Cycle {
            env.push(("MLDEBUG_RUN_WINDOW".into(), "cycle".into()));
            env.push(("MLDEBUG_RUN_SECONDS".into(), CYCLE_CAP_SECONDS.to_string()));
            env.push(("MLDEBUG_RUN_VERDICT_STEP".into(), VERDICT_STEP.to_string()));
        }
        env
    }
}

impl Drop for ProbeDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// `mldebug-run-<pid>-<n>` under `base`, created by this process alone (`create_dir` fails if
/// it exists), mode 0700 on Unix.
fn unique_dir(base: &Path) -> Result<PathBuf> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    for n in 0..1000u32 {
        let path = base.join(format!("mldebug-run-{}-{nanos}-{n}", std::process::id()));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        match builder.create(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(Error::io(
                    format!("creating a folder in {}", base.display()),
                    &e,
                ))
            }
        }
    }
    Err(Error::internal("no free name for the run's private folder"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probes_are_embedded_with_their_bootstrap() {
        assert!(
            RUN_PROBES.iter().any(|(p, _)| *p == "sitecustomize.py"),
            "{:?}",
            RUN_PROBES.iter().map(|f| f.0).collect::<Vec<_>>()
        );
        assert!(RUN_PROBES.iter().all(|(p, _)| !p.starts_with("tests/")));
    }

    #[test]
    fn the_folder_is_written_and_removed() {
        let dir = ProbeDir::create().unwrap();
        let p = dir.path().to_path_buf();
        assert!(p.join("sitecustomize.py").is_file());
        let env = dir.environment(Steps::Fixed(30));
        assert!(env
            .iter()
            .any(|(k, v)| k == "MLDEBUG_RUN_STEPS" && v == "30"));
        assert!(!env.iter().any(|(k, _)| k == "MLDEBUG_RUN_WINDOW"));
        let env = dir.environment(Steps::Cycle);
        assert!(env
            .iter()
            .any(|(k, v)| k == "MLDEBUG_RUN_WINDOW" && v == "cycle"));
        assert!(env
            .iter()
            .any(|(k, v)| k == "MLDEBUG_RUN_STEPS" && v == "1000"));
        drop(dir);
        assert!(!p.exists());
    }
}
