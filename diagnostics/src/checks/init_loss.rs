//! `init-loss`: is the loss at initialisation what a model that knows nothing should score?
//!
//! A freshly initialised classifier should spread its bets, so its cross-entropy should be close
//! to `ln C` (C = classes; for a language model, the vocabulary). Far above means the logits start
//! huge (unnormalised inputs, a bad init, a sum instead of a mean); far below means the loss is
//! not what it claims (its reduction, the targets it reads) or the output bias already fits skewed
//! labels. Not leakage: an untrained network cannot exploit a leak (refs/diagnostics.md).
//! Negative or non-finite means the loss itself is broken.
//!
//! On `zoo::cnn-unnormalised` (raw 0–255 pixels):
//! ```text
//! init-loss  fail  loss at init 18.353 is 13.2x ln(4) = 1.386 (3 inits): the logits start far
//!                  too large (input scale, init, or a sum instead of a mean)
//! ```
//! Read: the ratio is far outside the ±50% band; look at the input scaling first, then the last
//! layer's init and the loss's reduction. The per-init losses are in the details.
//!
//! On fresh parameters the forward pass runs in training mode: that is the loss the first
//! training step sees. In evaluation mode a batch norm would read running statistics nobody has
//! estimated yet (mean 0, variance 1) and judge a network the training never runs (a batch-norm
//! CNN on raw pixels scores 128x ln C that way, 1.2x in training mode).

use super::fresh::Fresh;
use super::read::{host_f32, loss_value};
use super::{next_for, skipped};
use crate::model::{Batch, DebugModel, Task};
use crate::options::Options;
use crate::report::{CheckId, Finding, Status};
use candle_core::Result;

const ID: CheckId = CheckId::InitLoss;

/// Fresh inits (and batches) averaged over: one init can be unlucky; three keep the check fast
/// and the verdict stable (zoo: the three losses lie within 10% of each other).
pub const INIT_LOSS_INITS: u64 = 3;
/// |loss / ln C − 1| above this warns (Karpathy's "verify loss @ init", SKILL.md `loss-at-init`). Zoo over
/// 5 seeds: clean models 0.996–1.012, candle's llama (last position only) 1.19–1.40.
pub const INIT_LOSS_WARN_BAND: f64 = 0.2;
/// |loss / ln C − 1| above this fails. Zoo: raw 0–255 pixels 5.1–14x, a summed
/// instead of averaged loss 32x (the batch size), a negated loss −1x.
pub const INIT_LOSS_FAIL_BAND: f64 = 0.5;

/// Runs on `INIT_LOSS_INITS` fresh inits of `M`, each with its own batch.
pub fn init_loss<M: DebugModel>(opts: &Options) -> Result<Finding> {
    if M::task() == Task::Regression {
        return Ok(skipped(
            ID,
            "regression model: there is no ln C to expect at init (only for classification and language models)",
        ));
    }
    let mut samples = Vec::new();
    for k in 0..INIT_LOSS_INITS {
        opts.check_deadline()?;
        let seed = opts.seed.wrapping_add(k);
        let fresh = Fresh::<M>::new(opts, seed)?;
        // Training mode: the buffers it writes belong to this throw-away model.
        samples.push(measure(&fresh.model, &fresh.batch, true)?);
        opts.report_progress(
            ID,
            k as usize + 1,
            INIT_LOSS_INITS as usize,
            samples.last().map(|s| s.loss),
        );
    }
    Ok(judge(&samples, opts, "inits"))
}

/// The same comparison for a model as it is now (for instance right after the user built it).
/// Only a forward pass, in evaluation mode so that nothing of the caller's is written (a batch
/// norm reads its running statistics as they are).
pub fn init_loss_on<M: DebugModel>(model: &M, batch: &Batch, opts: &Options) -> Result<Finding> {
    if M::task() == Task::Regression {
        return Ok(skipped(ID, "regression model: there is no ln C to expect"));
    }
    Ok(judge(&[measure(model, batch, false)?], opts, "model"))
}

/// One forward pass at init: the loss, the number of classes and the logits' spread.
struct Sample {
    loss: f64,
    classes: usize,
    logit_std: f64,
}

fn measure<M: DebugModel>(model: &M, batch: &Batch, train: bool) -> Result<Sample> {
    let output = model.forward(&batch.input, train)?;
    let loss = loss_value(&model.loss(&output, &batch.targets)?)?;
    let classes = output.dims().last().copied().unwrap_or(1);
    let logits = host_f32(&output)?;
    let n = logits.len().max(1) as f64;
    let mean = logits.iter().map(|&x| f64::from(x)).sum::<f64>() / n;
    let var = logits
        .iter()
        .map(|&x| (f64::from(x) - mean).powi(2))
        .sum::<f64>()
        / n;
    Ok(Sample {
        loss,
        classes,
        logit_std: var.sqrt(),
    })
}

/// `ln C`, with a single logit read as a binary classifier (`ln 2`).
fn expected_loss(classes: usize) -> f64 {
    (classes.max(2) as f64).ln()
}

fn judge(samples: &[Sample], opts: &Options, what: &str) -> Finding {
    let classes = samples[0].classes;
    let expected = expected_loss(classes);
    let n = samples.len() as f64;
    let mean = samples.iter().map(|s| s.loss).sum::<f64>() / n;
    // A NaN loss makes the range NaN (`f64::min`/`max` would skip it and report ±inf).
    let extreme = |pick: fn(f64, f64) -> f64| {
        samples
            .iter()
            .map(|s| s.loss)
            .reduce(|a, b| {
                if a.is_nan() || b.is_nan() {
                    f64::NAN
                } else {
                    pick(a, b)
                }
            })
            .unwrap_or(f64::NAN)
    };
    let (lo, hi) = (extreme(f64::min), extreme(f64::max));
    let logit_std = samples.iter().map(|s| s.logit_std).sum::<f64>() / n;
    let ratio = mean / expected;
    let count = if what == "model" {
        "this model".to_string()
    } else {
        format!("{} {what}", samples.len())
    };
    let c_name = if classes >= 2 {
        format!("ln({classes}) = {expected:.3}")
    } else {
        format!("ln(2) = {expected:.3} (one logit)")
    };
    let (status, summary) = if samples.iter().any(|s| !s.loss.is_finite()) {
        (
            Status::Fail,
            format!("loss at init is not finite ({mean}) over {count}: an overflow, log(0) or 0/0 in the forward pass or the loss (nan-trace finds where)"),
        )
    } else if mean < 0.0 {
        (
            Status::Fail,
            format!("loss at init is negative ({mean:.3}; expected {c_name}): a cross-entropy cannot be negative, is the sign flipped?"),
        )
    } else if ratio - 1.0 > INIT_LOSS_FAIL_BAND {
        (
            Status::Fail,
            format!("loss at init {mean:.3} is {ratio:.1}x {c_name} ({count}): the logits start far too large (input scale, init, or a sum instead of a mean)"),
        )
    } else if 1.0 - ratio > INIT_LOSS_FAIL_BAND {
        (
            Status::Fail,
            format!("loss at init {mean:.3} is only {ratio:.2}x {c_name} ({count}): suspiciously low: does the loss read its targets and reduce as meant, or is the output bias already fitted to skewed labels? (not leakage: an untrained model cannot exploit a leak)"),
        )
    } else if (ratio - 1.0).abs() > INIT_LOSS_WARN_BAND {
        (
            Status::Warn,
            format!("loss at init {mean:.3} is {ratio:.2}x {c_name} ({count}): a little off; check the last layer's init scale"),
        )
    } else {
        (
            Status::Pass,
            format!("loss at init {mean:.3} is close to {c_name} ({count}, ratio {ratio:.2})"),
        )
    };
    let mut f = Finding::new(ID, status, summary)
        .metric("loss", mean)
        .metric("expected", expected)
        .metric("ratio", ratio)
        .metric("loss_min", lo)
        .metric("loss_max", hi)
        .metric("classes", classes as f64)
        .metric("logit_std", logit_std)
        .metric("inits", n)
        .next(next_for(ID, status, opts));
    f.details = samples
        .iter()
        .enumerate()
        .map(|(k, s)| format!("init {k}: loss {:.4}, logit std {:.3}", s.loss, s.logit_std))
        .collect();
    f
}
