//! `nan-trace`: where does the first NaN or infinity come from?
//!
//! A few training steps (forward, backward, AdamW step) under the frame recorder
//! ([`crate::trace::Recorder`]): every traced layer's output is summarised on the device
//! (abs-min, abs-max, non-finite count) and read back once per step. The first frame holding a
//! NaN or an infinity names the module, and the frames recorded before it show how the values
//! got there. The batch input, the model output and the loss are recorded as frames too, and
//! after each step the parameters and gradients are scanned, so a model built without traced
//! layers still gets an answer (without the module name). When everything stays finite but the
//! largest value comes within `NEAR_MAX_HEADROOM` of the dtype's largest number, it warns.
//!
//! On `zoo::tiny-gpt-mask-times-inf` (the causal mask multiplied by -inf: 0 × inf = NaN):
//! ```text
//! nan-trace  fail  step 0: first non-finite value (4096 of them) in `blocks.0.attn.softmax`
//!                  (softmax) [8, 2, 16, 16]
//!    abs min    abs max  non-fin  module (kind) shape
//!    2.91e-3     3.50e0        0  embed (embedding) [8, 16, 32]
//!    3.30e-3     3.43e0        0  blocks.0.attn_norm (rms-norm) [8, 16, 32]
//!    4.79e-4     5.50e0        0  blocks.0.attn.q (linear) [8, 16, 32]
//!    4.05e-4     4.40e0        0  blocks.0.attn.k (linear) [8, 16, 32]
//!    2.55e-3     4.84e0        0  blocks.0.attn.v (linear) [8, 16, 32]
//!        NaN        NaN     4096  blocks.0.attn.softmax (softmax) [8, 2, 16, 16]  <-- first non-finite
//! ```
//! Read it bottom-up: the marked line is the culprit; the lines above are small and finite, so
//! the NaN was made between `q`/`k` and the softmax (the scores and the mask), not inherited.

use super::buffers;
use super::fresh::{restoring, Fresh};
use super::optimizer::CheckOptimizer;
use super::read::stats;
use crate::init::ParamStore;
use crate::model::{Batch, DebugModel};
use crate::options::Options;
use crate::report::{CheckId, Finding};
use crate::trace::{record, Frame, Recorder, StepSummary};
use candle_core::{DType, Result};
use mldebug_judge::nan_trace::{judge, Culprit, FrameRow, Measurement};
pub use mldebug_judge::nan_trace::{NAN_TRACE_STEPS, NEAR_MAX_HEADROOM};

const ID: CheckId = CheckId::NanTrace;

/// Runs on fresh parameters of `M`.
pub fn nan_trace<M: DebugModel>(opts: &Options) -> Result<Finding> {
    let fresh = Fresh::<M>::new(opts, opts.seed)?;
    run(&fresh.model, &fresh.params, &fresh.batch, opts)
}

/// Runs on the caller's model, then puts every parameter back.
pub fn nan_trace_on<M: DebugModel>(
    model: &M,
    params: &ParamStore,
    batch: &Batch,
    opts: &Options,
) -> Result<Finding> {
    restoring(params, || run(model, params, batch, opts))
}

fn run<M: DebugModel>(
    model: &M,
    params: &ParamStore,
    batch: &Batch,
    opts: &Options,
) -> Result<Finding> {
    // Buffers are scanned like parameters but never stepped.
    let split = buffers::split(model, params, batch)?;
    let mut opt = CheckOptimizer::new(split.param_vars(), opts.learning_rate)?;
    let named = params.named();
    let buffer_names = split.buffer_names();
    let recorder = Recorder::start();
    let mut culprit = None;
    let mut max_abs = 0f32;
    let mut traced_modules = 0usize;
    for step in 0..NAN_TRACE_STEPS {
        opts.check_deadline()?;
        // Token ids are not values that can overflow; only a float input is a frame.
        let own_frames = if batch.input.dtype().is_float() {
            record("input", "batch", None, &batch.input)?;
            3
        } else {
            2
        };
        let output = model.forward(&batch.input, true)?;
        record("output", "model", None, &output)?;
        let loss = model.loss(&output, &batch.targets)?;
        record("loss", "loss", None, &loss)?;
        let summary: StepSummary = recorder.end_step()?;
        // Some frames are ours (input, output, loss); the rest come from traced layers.
        traced_modules = traced_modules.max(summary.frames_recorded.saturating_sub(own_frames));
        max_abs = max_abs.max(summary.max_abs);
        if let Some(frame) = summary.first_non_finite {
            culprit = Some(self::culprit(step, &frame, &summary.frames_before, None));
            break;
        }
        let grads = loss.backward()?;
        if let Some((name, frame)) = scan(
            &named,
            &[],
            |v| grads.get(v.as_tensor()).cloned(),
            "gradient",
        )? {
            culprit = Some(self::culprit(step, &frame, &recorder.frames(), Some(name)));
            break;
        }
        opt.step(&grads)?;
        if let Some((name, frame)) = scan(
            &named,
            &buffer_names,
            |v| Some(v.as_tensor().clone()),
            "parameter",
        )? {
            culprit = Some(self::culprit(step, &frame, &recorder.frames(), Some(name)));
            break;
        }
        opts.report_progress(
            ID,
            step + 1,
            NAN_TRACE_STEPS,
            crate::checks::read::scalar(&loss).ok(),
        );
    }
    drop(recorder);
    let m = Measurement {
        steps: NAN_TRACE_STEPS,
        culprit,
        max_abs: f64::from(max_abs),
        traced_modules,
        dtype: format!("{:?}", opts.dtype),
        dtype_max: dtype_max(opts.dtype),
    };
    Ok(judge(&m, &opts.ctx(M::task())))
}

/// The first variable (by name) whose `pick` (its value or its gradient) holds a NaN or an
/// infinity, as a frame; a variable named in `buffers` is called a buffer, not `what`.
fn scan(
    named: &[(String, candle_core::Var)],
    buffers: &[&str],
    pick: impl Fn(&candle_core::Var) -> Option<candle_core::Tensor>,
    what: &'static str,
) -> Result<Option<(String, Frame)>> {
    for (name, var) in named {
        let Some(t) = pick(var) else { continue };
        let [abs_min, abs_max, non_finite] = stats(&t)?;
        if non_finite > 0.0 {
            let what = if buffers.contains(&name.as_str()) {
                "buffer"
            } else {
                what
            };
            let label = format!("{what} of {name}");
            return Ok(Some((
                label.clone(),
                Frame {
                    module: label,
                    kind: what,
                    shape: t.dims().to_vec(),
                    input_shape: Vec::new(),
                    abs_min,
                    abs_max,
                    non_finite: non_finite as usize,
                },
            )));
        }
    }
    Ok(None)
}

/// The largest finite number of `dtype`.
fn dtype_max(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => 65504.0,
        DType::BF16 => 3.389_531_4e38,
        DType::F64 => f64::MAX,
        _ => f64::from(f32::MAX),
    }
}

/// A recorded frame as the judgement reads it.
fn row(f: &Frame) -> FrameRow {
    FrameRow {
        module: f.module.clone(),
        kind: f.kind.to_string(),
        shape: f.shape.clone(),
        abs_min: f64::from(f.abs_min),
        abs_max: f64::from(f.abs_max),
        non_finite: f.non_finite,
    }
}

/// The first non-finite value, with the frames before it.
fn culprit(step: usize, frame: &Frame, before: &[Frame], scanned: Option<String>) -> Culprit {
    Culprit {
        step,
        frame: row(frame),
        before: before.iter().map(row).collect(),
        scanned,
    }
}
