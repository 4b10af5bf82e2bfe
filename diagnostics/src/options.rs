//! How a check runs: where, in what precision, from which seed, for how long.

use crate::report::CheckId;
use candle_core::{DType, Device};
use std::fmt;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct Options {
    pub device: Device,
    pub dtype: DType,
    /// Seeds both the parameter init and the batch (`DebugModel::batch`).
    pub seed: u64,
    /// Optimizer steps for the checks that train (overfit).
    pub steps: usize,
    /// Learning rate for the checks that train (AdamW, no weight decay).
    pub learning_rate: f64,
    /// How the model is named in the report and in the `next` commands (`--model <label>`).
    pub model_label: String,
    /// Called by the checks as they go (they never print); `None` = silent.
    pub progress: Option<Progress>,
}

/// Karpathy's "Adam at 3e-4" is a safe baseline; one fixed batch tolerates a larger step and
/// must be memorised within a couple of hundred steps, so 3e-3 keeps the check fast.
pub const DEFAULT_LEARNING_RATE: f64 = 3e-3;
/// Enough for every clean zoo model to memorise one batch (calibrated on the zoo).
pub const DEFAULT_STEPS: usize = 200;
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
            progress: None,
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

    /// `mldebug check <id> --model <label>`, the usual next command.
    pub fn check_command(&self, check: CheckId) -> String {
        format!("mldebug check {check} --model {}", self.model_label)
    }
}

/// Where a running check is: `step` of `total` (overfit: optimizer steps), with the loss when known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProgressEvent {
    pub check: CheckId,
    pub step: usize,
    pub total: usize,
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
