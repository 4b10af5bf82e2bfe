//! `label-mask`: are ignored targets (`-100`) really ignored, and are the labels what they claim?
//!
//! - the share of targets that are `-100`; every target masked means nothing is learned;
//! - the model's loss with **every** target masked must be exactly 0 with all-zero gradients
//!   (PyTorch's mean gives NaN there, 0/0: flagged as a warning);
//! - changing the logits at masked positions must not move the loss (else the mask is ignored);
//! - a loss that errors on `-100` (candle's `cross_entropy` has no ignore index) fails;
//! - causal LMs: targets equal to the inputs (labels not shifted by one), and padding trained
//!   on (a run of the same token ending several rows whose targets are not `-100`).
//!
//! On `zoo::tiny-gpt-pad-zero` (padding labelled 0 instead of -100):
//! ```text
//! label-mask  fail  padding is trained on: token 0 ends 5 of 8 rows (21 positions) and 21 of
//!                   its targets are real (mostly 0), not -100
//! ```
//! Read: set the targets of padding positions to -100 when building the batch.

use super::fresh::Fresh;
use super::read::{host_f32, host_i64, loss_value, scalar, stats};
use crate::model::{Batch, DebugModel, Task, IGNORE_INDEX};
use crate::options::Options;
use crate::report::Finding;
use crate::rng::SeededRng;
use candle_core::{DType, Result, Tensor};
use mldebug_judge::label_mask::{judge, AllMasked, Labels, MaskedLogits, Measurement};
pub use mldebug_judge::label_mask::{
    MASKED_WARN_SHARE, MASK_LEAK_TOLERANCE, PAD_RUN_MIN, PERTURBATION_SCALE, UNSHIFTED_SHARE,
};

/// Runs on fresh parameters of `M` and its batch.
pub fn label_mask<M: DebugModel>(opts: &Options) -> Result<Finding> {
    if M::task() == Task::Regression {
        return Ok(judge(&regression(), &opts.ctx(M::task())));
    }
    let fresh = Fresh::<M>::new(opts, opts.seed)?;
    run(&fresh.model, &fresh.batch, opts)
}

/// Runs on the caller's model and batch. Only forward and backward passes: parameters are not
/// updated (gradients are computed and dropped).
pub fn label_mask_on<M: DebugModel>(model: &M, batch: &Batch, opts: &Options) -> Result<Finding> {
    if M::task() == Task::Regression {
        return Ok(judge(&regression(), &opts.ctx(M::task())));
    }
    run(model, batch, opts)
}

/// Nothing to measure: the judgement skips a regression model.
fn regression() -> Measurement {
    Measurement {
        targets: Vec::new(),
        inputs: None,
        seq_len: None,
        labels: Labels::Shifted,
        all_masked: AllMasked::Loss {
            loss: 0.0,
            grads_move: false,
        },
        masked_logits: None,
        classes: None,
    }
}

fn run<M: DebugModel>(model: &M, batch: &Batch, opts: &Options) -> Result<Finding> {
    let targets = host_i64(&batch.targets)?;
    let output = model.forward(&batch.input, false)?;
    let classes = output.dims().last().copied().unwrap_or(1);
    let in_range = targets
        .iter()
        .all(|&t| t == IGNORE_INDEX || (0..classes as i64).contains(&t));
    // The loss first on the batch's targets with every -100 made class 0: if it errors on
    // class ids alone, the model's loss is broken (the check is an error, not a verdict on the
    // mask). A loss that errors only on -100 is the all-masked probe's finding; targets outside
    // the classes are the labels' own fault: the judgement fails both.
    let unmasked: Vec<i64> = targets
        .iter()
        .map(|&t| if t == IGNORE_INDEX { 0 } else { t })
        .collect();
    let unmasked = Tensor::from_vec(unmasked, batch.targets.dims(), batch.targets.device())?;
    if let Err(e) = model.loss(&output, &unmasked) {
        if in_range {
            return Err(e);
        }
    }
    let shape = batch.targets.dims().to_vec();
    let same_shape = batch.input.dims() == batch.targets.dims() && !batch.input.dtype().is_float();
    let m = Measurement {
        all_masked: all_masked_loss(model, &output, &shape)?,
        masked_logits: masked_logits(model, &output, &targets, &shape, opts)?,
        inputs: if same_shape {
            Some(host_i64(&batch.input)?)
        } else {
            None
        },
        seq_len: (shape.len() >= 2).then(|| shape[shape.len() - 1]),
        labels: Labels::Shifted,
        targets,
        classes: Some(classes),
    };
    Ok(judge(&m, &opts.ctx(M::task())))
}

/// Probe 1: the loss with every target masked, and whether it moves any gradient.
fn all_masked_loss<M: DebugModel>(
    model: &M,
    output: &Tensor,
    shape: &[usize],
) -> Result<AllMasked> {
    let device = output.device().clone();
    let all_masked = Tensor::full(IGNORE_INDEX, shape, &device)?;
    Ok(match model.loss(output, &all_masked) {
        Err(e) => AllMasked::Error {
            error: first_line(&e),
        },
        Ok(loss) => AllMasked::Loss {
            loss: loss_value(&loss)?,
            grads_move: if loss.track_op() {
                gradient_moves(&loss)?
            } else {
                false
            },
        },
    })
}

/// Probe 2: the loss on probe targets before and after noise on the logits they mask.
fn masked_logits<M: DebugModel>(
    model: &M,
    output: &Tensor,
    targets: &[i64],
    shape: &[usize],
    opts: &Options,
) -> Result<Option<MaskedLogits>> {
    let device = output.device().clone();
    let logits = output.detach();
    let Some(delta) = perturbation(&logits, targets, opts.seed)? else {
        return Ok(None);
    };
    let probe = probe_targets(targets, shape, &device)?;
    match (
        model.loss(&logits, &probe),
        model.loss(&(&logits + &delta)?, &probe),
    ) {
        (Ok(a), Ok(b)) => Ok(Some(MaskedLogits {
            before: scalar(&a)?,
            after: scalar(&b)?,
        })),
        _ => Ok(None),
    }
}

fn first_line(e: &candle_core::Error) -> String {
    e.to_string().lines().next().unwrap_or("").to_string()
}

/// True when some parameter gets a gradient that is not all zero (or not finite).
fn gradient_moves(loss: &Tensor) -> Result<bool> {
    let grads = loss.backward()?;
    for node in loss.sorted_nodes() {
        if !node.is_variable() {
            continue;
        }
        if let Some(g) = grads.get(node) {
            let [_, abs_max, non_finite] = stats(g)?;
            if abs_max != 0.0 && non_finite == 0.0 {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Which rows of the logits (flattened over all but the class dim) the probe masks: the batch's
/// own masked positions, or every other position when the batch masks nothing.
fn probe_rows(targets: &[i64]) -> Vec<bool> {
    if targets.contains(&IGNORE_INDEX) && targets.iter().any(|&t| t != IGNORE_INDEX) {
        targets.iter().map(|&t| t == IGNORE_INDEX).collect()
    } else {
        (0..targets.len()).map(|i| i % 2 == 1).collect()
    }
}

fn probe_targets(targets: &[i64], shape: &[usize], device: &candle_core::Device) -> Result<Tensor> {
    let rows = probe_rows(targets);
    let t: Vec<i64> = targets
        .iter()
        .zip(&rows)
        .map(|(&t, &m)| if m { IGNORE_INDEX } else { t })
        .collect();
    Tensor::from_vec(t, shape, device)
}

/// Seeded noise on the logits' rows that the probe masks, zero elsewhere; `None` when the
/// logits do not line up with the targets (one row of logits per target).
fn perturbation(logits: &Tensor, targets: &[i64], seed: u64) -> Result<Option<Tensor>> {
    let classes = logits.dims().last().copied().unwrap_or(1);
    if logits.elem_count() != targets.len() * classes || targets.len() < 2 {
        return Ok(None);
    }
    let rows = probe_rows(targets);
    let mask: Vec<f32> = rows.iter().map(|&m| if m { 1.0 } else { 0.0 }).collect();
    let mask = Tensor::from_vec(mask, (targets.len(), 1), logits.device())?;
    let noise = SeededRng::derive(seed, "label-mask-perturbation")
        .normal_tensor(
            (targets.len(), classes),
            0.0,
            PERTURBATION_SCALE,
            DType::F32,
            &candle_core::Device::Cpu,
        )?
        .to_device(logits.device())?;
    let delta = noise
        .broadcast_mul(&mask)?
        .reshape(logits.dims())?
        .to_dtype(logits.dtype())?;
    // Half precision may round the noise to zero at tiny scales; a zero probe proves nothing.
    if host_f32(&delta)?.iter().all(|&x| x == 0.0) {
        return Ok(None);
    }
    Ok(Some(delta))
}
