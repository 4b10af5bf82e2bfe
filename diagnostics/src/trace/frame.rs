//! What the recorder hands back: one [`Frame`] per traced module output, one [`StepSummary`] per
//! step.

use serde::Serialize;
use std::fmt;

/// The output of one traced module in one forward pass.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Frame {
    /// The module's name, from `vb.prefix()` (`blocks.0.attn.q_proj`).
    pub module: String,
    /// What kind of layer it is (`linear`, `rms-norm`, ...).
    pub kind: &'static str,
    /// The output's shape.
    pub shape: Vec<usize>,
    /// The input's shape, when the module has one tensor input (empty otherwise). Not part of
    /// any report: the memory estimate sizes a layer's backward from it.
    #[serde(skip)]
    pub input_shape: Vec<usize>,
    /// Smallest `|x|` over the output's non-NaN elements (NaN when all are NaN).
    pub abs_min: f32,
    /// Largest `|x|` over the output's non-NaN elements (`inf` when an infinity is present).
    pub abs_max: f32,
    /// How many elements are NaN or ±inf.
    pub non_finite: usize,
}

impl fmt::Display for Frame {
    /// `  1.23e-04  5.67e+01        0  blocks.0.mlp.up (linear) [4, 16, 64]`: abs-min, abs-max,
    /// non-finite count, module, kind, shape: the columns of the frame table.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:>10.2e} {:>10.2e} {:>8}  {} ({}) {:?}",
            self.abs_min, self.abs_max, self.non_finite, self.module, self.kind, self.shape
        )
    }
}

/// The header line matching [`Frame`]'s `Display` columns.
pub const FRAME_HEADER: &str = "   abs min    abs max  non-fin  module (kind) shape";

/// What one step recorded, read back from the device in one go by
/// [`Recorder::end_step`](super::Recorder::end_step).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepSummary {
    /// 0 for the first `end_step` after `start`, then 1, 2, ...
    pub step: usize,
    /// How many frames were recorded during this step.
    pub frames_recorded: usize,
    /// The first frame of this step with a NaN or infinite value, if any.
    pub first_non_finite: Option<Frame>,
    /// Up to `capacity - 1` frames recorded just before `first_non_finite` (oldest first; they
    /// may come from earlier steps). Empty when every value was finite.
    pub frames_before: Vec<Frame>,
    /// Modules whose input depended on a parameter but whose output did not: gradients stop
    /// there (candle's fused `rms_norm`, `layer_norm`, `softmax_last_dim`, `rope` do this).
    /// Each name once, in the order first seen.
    pub cuts: Vec<String>,
    /// The largest `abs_max` over this step's frames (finite frames only; 0 when none).
    pub max_abs: f32,
}

impl StepSummary {
    /// True when some traced output held a NaN or an infinity.
    pub fn has_non_finite(&self) -> bool {
        self.first_non_finite.is_some()
    }

    /// The frame table a person reads: the frames before the first non-finite output, then that
    /// output, marked. Empty when every value was finite.
    pub fn frame_table(&self) -> Vec<String> {
        let Some(bad) = &self.first_non_finite else {
            return Vec::new();
        };
        let mut lines = vec![FRAME_HEADER.to_string()];
        lines.extend(self.frames_before.iter().map(|f| f.to_string()));
        lines.push(format!("{bad}  <-- first non-finite"));
        lines
    }
}
