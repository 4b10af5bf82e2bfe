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
use crate::model::{Batch, DebugModel};
use crate::options::Options;
use crate::report::Finding;
use candle_core::Result;
use mldebug_judge::init_loss::judge;
pub use mldebug_judge::init_loss::{
    Measurement, Sample, INIT_LOSS_FAIL_BAND, INIT_LOSS_INITS, INIT_LOSS_WARN_BAND,
};
use mldebug_report::{CheckId, Task};

const ID: CheckId = CheckId::InitLoss;

/// Runs on `INIT_LOSS_INITS` fresh inits of `M`, each with its own batch.
pub fn init_loss<M: DebugModel>(opts: &Options) -> Result<Finding> {
    let ctx = opts.ctx(M::task());
    let mut samples = Vec::new();
    if M::task() != Task::Regression {
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
    }
    let m = Measurement {
        samples,
        current_model: false,
    };
    Ok(judge(&m, &ctx))
}

/// The same comparison for a model as it is now (for instance right after the user built it).
/// Only a forward pass, in evaluation mode so that nothing of the caller's is written (a batch
/// norm reads its running statistics as they are).
pub fn init_loss_on<M: DebugModel>(model: &M, batch: &Batch, opts: &Options) -> Result<Finding> {
    let samples = if M::task() == Task::Regression {
        Vec::new()
    } else {
        vec![measure(model, batch, false)?]
    };
    let m = Measurement {
        samples,
        current_model: true,
    };
    Ok(judge(&m, &opts.ctx(M::task())))
}

/// One forward pass at init: the loss, the number of classes and the logits' spread.
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
