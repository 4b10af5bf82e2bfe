//! The verdict checkpoint of a cycle window: at the checkpoint step (the steps a fixed window
//! used to watch) every process writes `checkpoint-<pid>` in the run folder and waits; mldebug
//! judges the traces so far and writes `verdict`: `stop` when they hold a fail already (every
//! process ends there, so a bug the first steps show is reported as soon as before the cycle
//! window existed), `go` otherwise (the window goes on). See `torch/run/mldebug_run/window.py`.

use mldebug_doctor::finding::Severity;
use mldebug_doctor::trace::records::End;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long mldebug waits, after the first process reached the checkpoint, for the others
/// (ranks reach it within a step of one another; a process that never steps never does).
const GATHER: Duration = Duration::from_secs(2);

/// Watches the run folder for processes at the checkpoint; answers once.
#[derive(Debug)]
pub struct Checkpoint {
    dir: PathBuf,
    first_seen: Option<Instant>,
    answered: Option<bool>,
}

impl Checkpoint {
    pub fn new(dir: &Path) -> Checkpoint {
        Checkpoint {
            dir: dir.to_path_buf(),
            first_seen: None,
            answered: None,
        }
    }

    /// Whether the checkpoint ended the window (a fail in the first steps), once answered.
    pub fn stopped(&self) -> bool {
        self.answered == Some(true)
    }

    /// Called while the command runs: answers when every stepping process is at the checkpoint
    /// (or the others are late).
    pub fn poll(&mut self) {
        if self.answered.is_some() {
            return;
        }
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let names: Vec<String> = entries
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        let waiting = names
            .iter()
            .filter(|n| n.starts_with("checkpoint-"))
            .count();
        if waiting == 0 {
            return;
        }
        let first = *self.first_seen.get_or_insert_with(Instant::now);
        let Ok(collected) = super::traces::collect(&self.dir) else {
            return self.answer(false);
        };
        let Ok(mut processes) = super::traces::parse(&collected.text) else {
            return self.answer(false);
        };
        let stepping = processes.iter().filter(|p| !p.steps.is_empty()).count();
        if waiting < stepping && first.elapsed() < GATHER {
            return;
        }
        // The first steps are judged as a trace that ended there.
        for p in processes.iter_mut().filter(|p| p.end.is_none()) {
            p.end = Some(End {
                reason: "steps".into(),
                steps: p.steps.len() as u64,
                ..End::default()
            });
        }
        let fail = mldebug_doctor::trace::judge(&processes)
            .findings
            .iter()
            .any(|f| f.severity == Severity::Fail);
        self.answer(fail);
    }

    fn answer(&mut self, stop: bool) {
        self.answered = Some(stop);
        let tmp = self.dir.join("verdict.tmp");
        let text = if stop { "stop\n" } else { "go\n" };
        if std::fs::write(&tmp, text).is_ok() {
            let _ = std::fs::rename(&tmp, self.dir.join("verdict"));
        }
    }
}
