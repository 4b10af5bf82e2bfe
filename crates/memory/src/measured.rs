//! Measured training memory, framework-neutral: what `check memory` reads from a counting
//! allocator (candle on CPU) and what a PyTorch run can fill from `torch.cuda.max_memory_allocated`
//! and `reset_peak_memory_stats` around each stage. [`crate::judge`] reads only this.
//!
//! Every byte count is relative to a baseline taken before the model was built, so the stages
//! include the weights, the batch and whatever is alive across steps.

use serde::{Deserialize, Serialize};

/// One training step's peaks and levels.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct StepMemory {
    /// The highest level during forward and loss.
    pub forward: f64,
    /// The level when the loss is computed (what forward keeps for backward, plus everything
    /// resident).
    pub forward_end: f64,
    /// The highest level during backward.
    pub backward: f64,
    /// The level after backward, with the loss and the model output dropped: the gradients and
    /// whatever they keep alive.
    #[serde(default)]
    pub after_backward: f64,
    /// The highest level during the optimizer step (gradients still alive).
    pub optimizer_step: f64,
    /// The level after the step, gradients and graph freed: what stays alive across steps.
    pub end: f64,
    /// The largest single allocation during forward and loss; 0 where the meter cannot tell (a
    /// GPU memory pool).
    pub forward_largest: f64,
}

/// One module's output in one forward pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModuleActivation {
    /// The module's name.
    pub module: String,
    /// The layer kind (`linear`, `conv2d`, ...).
    pub kind: String,
    /// Bytes of its output in one forward pass.
    pub bytes: f64,
}

/// A measured run of a few training steps.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Measurement {
    /// How the bytes were counted ("counting allocator, CPU").
    pub source: String,
    /// After the model is built: weights and the model's constants.
    pub load: f64,
    /// The batch (inputs and targets).
    pub data: f64,
    /// What the optimizer allocated when it was created (its state), at step 1.
    pub optimizer_state: f64,
    /// Steps 1, 2, ... in order.
    pub steps: Vec<StepMemory>,
    /// Module outputs of one forward pass, where the model's layers are traced; empty otherwise.
    pub modules: Vec<ModuleActivation>,
}

/// The estimate of each stage of a steady-state step, to set beside a measurement.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct StageEstimate {
    /// After the model is built.
    pub load: f64,
    /// At the forward pass's peak.
    pub forward: f64,
    /// At the backward pass's peak.
    pub backward: f64,
    /// At the optimizer step's peak.
    pub optimizer_step: f64,
}

/// What `mldebug memory --model` reports for a candle model: its real parameter counts and
/// the estimate of each stage, from the model's own autograd graph, without measuring.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelEstimate {
    /// Every value in the model's variables (parameters and buffers).
    pub values: u64,
    /// The values of the parameters the optimizer trains (buffers left out).
    pub trainable: u64,
    /// Bytes of one value (the dtype the checks build the model in).
    pub value_bytes: usize,
    /// The batch the estimate is for, as `input [dims] → targets [dims]`.
    pub batch: String,
    /// The estimate of each stage.
    pub estimate: StageEstimate,
    /// The traced layers' outputs of one forward pass, largest first.
    pub modules: Vec<ModuleActivation>,
}

impl Measurement {
    /// The measured stages of step `i` (0-based) as `[load, forward, backward, optimizer step]`.
    pub fn stages(&self, i: usize) -> Option<[f64; 4]> {
        let s = self.steps.get(i)?;
        Some([self.load, s.forward, s.backward, s.optimizer_step])
    }

    /// The largest module output, if any module was traced.
    pub fn largest_module(&self) -> Option<&ModuleActivation> {
        self.modules
            .iter()
            .max_by(|a, b| a.bytes.total_cmp(&b.bytes))
    }
}

impl StageEstimate {
    /// The four stages in order: load, forward, backward, optimizer step.
    pub fn as_array(&self) -> [f64; 4] {
        [self.load, self.forward, self.backward, self.optimizer_step]
    }
}
