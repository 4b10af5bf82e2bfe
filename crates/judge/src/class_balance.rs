//! `class-balance`: does one class dominate the targets?
//!
//! Counts the class ids of the batch (ignoring `-100`): when the commonest class outnumbers the
//! rarest by far, a model can score well by always answering the majority (the majority-class
//! trap). Classification only: a language model's token frequencies are skewed by nature.

use crate::common::{skipped, Ctx};
use mldebug_report::{CheckId, Finding, Status, Task, IGNORE_INDEX};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const ID: CheckId = CheckId::ClassBalance;

/// Commonest:rarest above this warns.
pub const IMBALANCE_WARN: f64 = 10.0;
/// ... and above this fails.
pub const IMBALANCE_FAIL: f64 = 100.0;

/// The batch's targets, flat (`-100` kept: the judgement leaves them out).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Measurement {
    /// The targets are floats (regression values), not class ids.
    #[serde(default)]
    pub targets_float: bool,
    /// Every target of the batch, flat (-100 for ignored ones).
    #[serde(default)]
    pub targets: Vec<i64>,
}

/// The verdict: how far the commonest class outnumbers the rarest.
pub fn judge(m: &Measurement, ctx: &Ctx) -> Finding {
    match ctx.task {
        Task::Regression => {
            return skipped(ID, "regression model: targets are values, not classes");
        }
        Task::CausalLm => {
            return skipped(
                ID,
                "causal language model: token frequencies are skewed by nature (Zipf), a class ratio says nothing",
            );
        }
        Task::Classification => {}
    }
    if m.targets_float {
        return skipped(ID, "the targets are floats, not class ids");
    }
    let mut counts: BTreeMap<i64, usize> = BTreeMap::new();
    for &t in &m.targets {
        if t != IGNORE_INDEX {
            *counts.entry(t).or_default() += 1;
        }
    }
    let total: usize = counts.values().sum();
    let (Some((&major, &most)), Some((&minor, &least))) = (
        counts
            .iter()
            .max_by_key(|&(c, n)| (*n, std::cmp::Reverse(*c))),
        counts.iter().min_by_key(|&(c, n)| (*n, *c)),
    ) else {
        return skipped(
            ID,
            "every target is -100: no labels to count (see label-mask)",
        );
    };
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
        .next(ctx.next_for(ID, status));
    f.details = counts
        .iter()
        .map(|(c, n)| format!("class {c}: {n}"))
        .collect();
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::test_ctx;

    fn with(targets: Vec<i64>) -> Finding {
        judge(
            &Measurement {
                targets_float: false,
                targets,
            },
            &test_ctx(Task::Classification),
        )
    }

    #[test]
    fn ratios_and_edges() {
        assert_eq!(with(vec![0, 1, 2, 0, 1, 2]).status, Status::Pass);
        let mut skewed = vec![0; 50];
        skewed.extend([1, 1, 1]);
        assert_eq!(with(skewed).status, Status::Warn);
        let mut trap = vec![0; 202];
        trap.extend([1, 1]);
        assert_eq!(with(trap).status, Status::Fail);
        assert_eq!(with(vec![3, 3, -100]).status, Status::Fail);
        assert_eq!(with(vec![-100, -100]).status, Status::Skipped);
        assert_eq!(with(vec![]).status, Status::Skipped);
    }
}
