//! `nan-trace`: where does the first NaN or infinity appear?
//!
//! A few training steps with every module's output watched (abs-min, abs-max and the count of
//! non-finite values, kept in a ring of recent frames); after each backward pass the gradients,
//! and after each optimizer step the parameters, are scanned too. The first non-finite value
//! names its module, or the gradient or parameter it appeared in, with the frames before it.
//! All finite but close to the dtype's largest value warns.

use crate::common::Ctx;
use mldebug_report::non_finite;
use mldebug_report::{CheckId, Finding, Status};
use serde::{Deserialize, Serialize};
use std::fmt;

const ID: CheckId = CheckId::NanTrace;

/// Training steps watched.
pub const NAN_TRACE_STEPS: usize = 5;
/// All finite, but the largest value within this factor of the dtype's largest warns.
pub const NEAR_MAX_HEADROOM: f64 = 100.0;

/// One watched output (or scanned gradient or parameter).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameRow {
    /// The module's name (`blocks.0.attn.q_proj`), or `gradient of w`, `input`, `output`, `loss`.
    pub module: String,
    /// The layer kind (`linear`, `Linear`, ...) or `gradient`, `parameter`, `buffer`.
    pub kind: String,
    /// The output's shape.
    pub shape: Vec<usize>,
    /// The smallest `|x|` of the output.
    #[serde(with = "non_finite::number")]
    pub abs_min: f64,
    /// The largest `|x|` of the output.
    #[serde(with = "non_finite::number")]
    pub abs_max: f64,
    /// How many of its values are NaN or infinite.
    pub non_finite: usize,
}

impl fmt::Display for FrameRow {
    /// `  1.23e-04  5.67e+01        0  blocks.0.mlp.up (linear) [4, 16, 64]`: abs-min, abs-max,
    /// non-finite count, module, kind, shape: the columns of [`FRAME_HEADER`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:>10.2e} {:>10.2e} {:>8}  {} ({}) {:?}",
            self.abs_min, self.abs_max, self.non_finite, self.module, self.kind, self.shape
        )
    }
}

/// The header line matching [`FrameRow`]'s `Display` columns.
pub const FRAME_HEADER: &str = "   abs min    abs max  non-fin  module (kind) shape";

/// The first non-finite value and what came before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Culprit {
    /// The training step (0-based).
    pub step: usize,
    /// The first frame that holds a non-finite value.
    pub frame: FrameRow,
    /// The frames recorded just before, oldest first.
    #[serde(default)]
    pub before: Vec<FrameRow>,
    /// `gradient of w` / `parameter of w` / `buffer of bn.running_mean` when a scan after the
    /// forward pass found it.
    #[serde(default)]
    pub scanned: Option<String>,
}

/// Training steps watched for the first non-finite value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Steps run (fewer when a culprit stopped them).
    #[serde(default)]
    pub steps: usize,
    /// The first non-finite value, or none in the steps run.
    #[serde(default)]
    pub culprit: Option<Culprit>,
    /// The largest finite `|x|` seen.
    #[serde(with = "non_finite::number")]
    pub max_abs: f64,
    /// Modules watched besides the input, output and loss.
    pub traced_modules: usize,
    /// The compute dtype (`F32`, `float16`, ...).
    pub dtype: String,
    /// Its largest finite value.
    #[serde(with = "non_finite::number")]
    pub dtype_max: f64,
}

/// What the culprit was, in words.
fn culprit_words(c: &Culprit) -> String {
    match &c.scanned {
        Some(name) if c.frame.kind == "buffer" => format!(
            "`{name}` after a training step (the forward pass writes it, so the activations it averages overflowed)"
        ),
        Some(name) if c.frame.kind == "parameter" => format!(
            "`{name}` after the optimizer step (the forward pass and the gradients were finite): the update overflowed or divided by zero"
        ),
        Some(name) => format!("`{name}` after a finite forward pass: the backward pass overflowed or divided by zero"),
        None if c.frame.module == "loss" => {
            "the loss, from a finite model output: log(0), 0/0 (every target masked?) or an overflow inside the loss".to_string()
        }
        None if c.frame.module == "input" => "the input batch itself".to_string(),
        None => format!("`{}` ({}) {:?}", c.frame.module, c.frame.kind, c.frame.shape),
    }
}

/// The verdict: where the first NaN or infinity came from, or none.
pub fn judge(m: &Measurement, ctx: &Ctx) -> Finding {
    let without_wrappers = if m.traced_modules == 0 {
        " (no traced layers: only the input, output, loss, parameters and gradients were watched; build with mldebug_diagnostics::nn layers to name modules)"
    } else {
        ""
    };
    let limit = m.dtype_max;
    let max_abs = m.max_abs;
    let (status, summary, details) = match &m.culprit {
        Some(c) => {
            let mut lines = vec![FRAME_HEADER.to_string()];
            lines.extend(c.before.iter().map(ToString::to_string));
            lines.push(format!("{}  <-- first non-finite", c.frame));
            (
                Status::Fail,
                format!(
                    "step {}: first non-finite value ({} of them) in {}{without_wrappers}",
                    c.step,
                    c.frame.non_finite,
                    culprit_words(c)
                ),
                lines,
            )
        }
        None if max_abs * NEAR_MAX_HEADROOM > limit => (
            Status::Warn,
            format!(
                "all finite over {NAN_TRACE_STEPS} steps, but values reach {max_abs:.2e}, within {NEAR_MAX_HEADROOM}x of the {} limit {limit:.2e}",
                m.dtype
            ),
            Vec::new(),
        ),
        None => (
            Status::Pass,
            format!("all finite over {NAN_TRACE_STEPS} training steps (largest value {max_abs:.2e}){without_wrappers}"),
            Vec::new(),
        ),
    };
    let f = Finding::new(ID, status, summary)
        .metric("steps", NAN_TRACE_STEPS as f64)
        .metric("max_abs", max_abs)
        .metric("dtype_max", limit)
        .metric("traced_modules", m.traced_modules as f64)
        .next(ctx.next_for(ID, status));
    let mut f = f;
    f.details = details;
    f
}
