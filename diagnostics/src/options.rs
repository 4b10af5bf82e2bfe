//! How a check runs: where, in what precision, from which seed, for how long.

use crate::model::Task;
use crate::report::CheckId;
use candle_core::{DType, Device};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How the checks run: device, dtype, seed, steps, learning rate, deadline, progress.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where the checks run.
    pub device: Device,
    /// The parameters' dtype.
    pub dtype: DType,
    /// Seeds both the parameter init and the batch (`DebugModel::batch`).
    pub seed: u64,
    /// Optimizer steps for the checks that train (overfit).
    pub steps: usize,
    /// Learning rate for the checks that train (AdamW, no weight decay).
    pub learning_rate: f64,
    /// How the model is named in the report and in the `next` commands (`--model <label>`).
    pub model_label: String,
    /// The flags besides `--model` that the `next` commands repeat (`--forward TinyLm::forward`,
    /// `--input tokens:16x32`, ...), one word each, unquoted; empty for a zoo model.
    pub model_flags: Vec<String>,
    /// Called by the checks as they go (they never print); `None` = silent.
    pub progress: Option<Progress>,
    /// When the checks must stop. Every check looks at it between steps; once it has passed,
    /// the running check ends as an `error` ("timed out after ...") and the checks after it
    /// do not start. `None` = no limit.
    pub deadline: Option<Deadline>,
}

/// A point in time the checks must stop at, and the limit it came from (for the message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    at: Instant,
    limit: Duration,
}

impl Deadline {
    /// `limit` from now.
    pub fn after(limit: Duration) -> Deadline {
        let now = Instant::now();
        Deadline {
            at: now
                .checked_add(limit)
                .unwrap_or(now + Duration::from_secs(MAX_TIMEOUT_S)),
            limit,
        }
    }

    /// The deadline is behind us.
    pub fn passed(&self) -> bool {
        Instant::now() >= self.at
    }

    /// The time the checks were given.
    pub fn limit(&self) -> Duration {
        self.limit
    }

    /// "timed out after 3s (--timeout) and was stopped".
    pub fn message(&self) -> String {
        format!(
            "timed out after {}s (--timeout) and was stopped",
            self.limit.as_secs_f64()
        )
    }
}

/// Karpathy's "Adam at 3e-4" is a safe baseline; one fixed batch tolerates a larger step and
/// must be memorised within a couple of hundred steps, so 3e-3 keeps the check fast.
pub const DEFAULT_LEARNING_RATE: f64 = 3e-3;
/// The limits on steps and time (their home is [`crate::plan`]).
pub use crate::plan::{DEFAULT_STEPS, MAX_STEPS, MAX_TIMEOUT_S};
/// The label used when the caller does not name the model.
pub const DEFAULT_MODEL_LABEL: &str = "crate::Net";

impl Default for Options {
    fn default() -> Self {
        Options {
            device: Device::Cpu,
            dtype: DType::F32,
            seed: 0,
            steps: DEFAULT_STEPS,
            learning_rate: DEFAULT_LEARNING_RATE,
            model_label: DEFAULT_MODEL_LABEL.to_string(),
            model_flags: Vec::new(),
            progress: None,
            deadline: None,
        }
    }
}

impl Options {
    /// Reports progress to the caller's callback, if any.
    pub fn report_progress(&self, check: CheckId, step: usize, total: usize, loss: Option<f64>) {
        if let Some(Progress(f)) = &self.progress {
            f(ProgressEvent {
                check,
                step,
                total,
                loss,
            });
        }
    }

    /// An error once the deadline has passed (checks call it between steps).
    pub fn check_deadline(&self) -> candle_core::Result<()> {
        match &self.deadline {
            Some(d) if d.passed() => Err(candle_core::Error::Msg(d.message())),
            _ => Ok(()),
        }
    }

    /// Whether the deadline has passed.
    pub fn timed_out(&self) -> bool {
        self.deadline.as_ref().is_some_and(Deadline::passed)
    }

    /// `mldebug check <id> --model <label> [flags]`, the usual next command.
    pub fn check_command(&self, check: CheckId) -> String {
        self.subject().command(check.as_str())
    }

    /// The model as the next commands name it: its label and its flags.
    pub fn subject(&self) -> mldebug_report::Subject {
        mldebug_report::Subject::candle(&self.model_label, &self.model_flags)
    }

    /// What the judgement of a check on a model of `task` needs from these options.
    pub fn ctx(&self, task: Task) -> mldebug_judge::Ctx {
        mldebug_judge::Ctx {
            subject: self.subject(),
            task,
            steps: self.steps,
            learning_rate: self.learning_rate,
        }
    }
}

/// Where a running check is: `step` of `total` (overfit: optimizer steps), with the loss when known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProgressEvent {
    /// The check running.
    pub check: CheckId,
    /// Its step.
    pub step: usize,
    /// Of this many.
    pub total: usize,
    /// The loss at this step, when the check computes one.
    pub loss: Option<f64>,
}

/// A progress callback (a spinner or a bar in the CLI).
#[derive(Clone)]
pub struct Progress(pub Arc<dyn Fn(ProgressEvent) + Send + Sync>);

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Progress(..)")
    }
}
