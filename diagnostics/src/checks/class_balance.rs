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
use super::{next_for, skipped};
use crate::model::{Batch, DebugModel, Task, IGNORE_INDEX};
use crate::options::Options;
use crate::report::{CheckId, Finding, Status};
use candle_core::Result;
use std::collections::BTreeMap;

const ID: CheckId = CheckId::ClassBalance;

/// Commonest:rarest above this warns (SageMaker Debugger's `class_imbalance` rule
/// defaults to a 10:1 ratio).
pub const IMBALANCE_WARN: f64 = 10.0;
/// Above this fails: the majority-class trap (refs/diagnostics.md, class-balance).
pub const IMBALANCE_FAIL: f64 = 100.0;

/// Counts the labels of `M::batch(seed)`. No forward pass.
pub fn class_balance<M: DebugModel>(opts: &Options) -> Result<Finding> {
    match M::task() {
        Task::Regression => Ok(skipped(ID, "regression model: targets are values, not classes")),
        Task::CausalLm => Ok(skipped(
            ID,
            "causal language model: token frequencies are skewed by nature (Zipf), a class ratio says nothing",
        )),
        Task::Classification => {
            let batch = M::batch(&opts.device, opts.seed)?;
            class_balance_on(&batch, opts)
        }
    }
}

/// Counts the labels of `batch` (any batch, or all of a dataset's targets at once).
pub fn class_balance_on(batch: &Batch, opts: &Options) -> Result<Finding> {
    if batch.targets.dtype().is_float() {
        return Ok(skipped(ID, "the targets are floats, not class ids"));
    }
    let mut counts: BTreeMap<i64, usize> = BTreeMap::new();
    for t in host_i64(&batch.targets)? {
        if t != IGNORE_INDEX {
            *counts.entry(t).or_default() += 1;
        }
    }
    let total: usize = counts.values().sum();
    if total == 0 {
        return Ok(skipped(
            ID,
            "every target is -100: no labels to count (see label-mask)",
        ));
    }
    let (&major, &most) = counts
        .iter()
        .max_by_key(|&(c, n)| (*n, std::cmp::Reverse(*c)))
        .expect("non-empty");
    let (&minor, &least) = counts
        .iter()
        .min_by_key(|&(c, n)| (*n, *c))
        .expect("non-empty");
    let ratio = most as f64 / least as f64;
    let (status, summary) = if counts.len() == 1 {
        (
            Status::Fail,
            format!("every one of the {total} targets is class {major}: the model only ever sees one answer"),
        )
    } else if ratio > IMBALANCE_FAIL {
        (
            Status::Fail,
            format!("class {major} outnumbers class {minor} by {ratio:.0}:1 ({most} of {total} targets): the majority-class trap"),
        )
    } else if ratio > IMBALANCE_WARN {
        (
            Status::Warn,
            format!("class {major} outnumbers class {minor} by {ratio:.0}:1 ({most} of {total} targets): watch per-class metrics"),
        )
    } else {
        (
            Status::Pass,
            format!(
                "{} classes, commonest:rarest {ratio:.1}:1 over {total} targets",
                counts.len()
            ),
        )
    };
    let mut f = Finding::new(ID, status, summary)
        .metric("classes_seen", counts.len() as f64)
        .metric("targets", total as f64)
        .metric("majority_share", most as f64 / total as f64)
        .metric(
            "ratio",
            if counts.len() == 1 {
                f64::INFINITY
            } else {
                ratio
            },
        )
        .next(next_for(ID, status, opts));
    f.details = counts
        .iter()
        .map(|(c, n)| format!("class {c}: {n}"))
        .collect();
    Ok(f)
}
