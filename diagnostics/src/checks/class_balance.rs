//! `class-balance`: is one class so common that predicting it always looks good?
//!
//! Counts the targets of the batch per class (ignoring `-100`) and compares the commonest class
//! with the rarest one present. At 100:1 a model that always answers the majority class is right
//! 99% of the time and the loss barely pushes it elsewhere (the majority-class trap).
//!
//! On `zoo::mlp-imbalanced`:
//! ```text
//! class-balance  fail  class 0 outnumbers class 1 by 101:1 (101 of 104 targets): the
//!                      majority-class trap
//! ```
//! Read: reweight the loss, resample the data, or judge with per-class metrics.

use super::read::host_i64;
use crate::model::{Batch, DebugModel, Task};
use crate::options::Options;
use crate::report::Finding;
use candle_core::Result;
use mldebug_judge::class_balance::{judge, Measurement};
pub use mldebug_judge::class_balance::{IMBALANCE_FAIL, IMBALANCE_WARN};

/// Counts the targets of `M`'s batch (classification only; the judgement says why not for the
/// other tasks).
pub fn class_balance<M: DebugModel>(opts: &Options) -> Result<Finding> {
    let ctx = opts.ctx(M::task());
    if M::task() != Task::Classification {
        return Ok(judge(&Measurement::default(), &ctx));
    }
    let batch = M::batch(&opts.device, opts.seed)?;
    Ok(judge(&measure(&batch)?, &ctx))
}

/// The same on a batch the caller has (a classifier's).
pub fn class_balance_on(batch: &Batch, opts: &Options) -> Result<Finding> {
    Ok(judge(&measure(batch)?, &opts.ctx(Task::Classification)))
}

fn measure(batch: &Batch) -> Result<Measurement> {
    if batch.targets.dtype().is_float() {
        return Ok(Measurement {
            targets_float: true,
            targets: Vec::new(),
        });
    }
    Ok(Measurement {
        targets_float: false,
        targets: host_i64(&batch.targets)?,
    })
}
