//! `step-changes-nothing` at warn: steps that land but move the weights by less than a
//! millionth of their norm (the median of the steps after the first), whatever the cause.

use super::judge;
use super::test_support::{clean, processes, set};
use crate::finding::{Finding, Severity, Symptom};
use serde_json::{json, Value};

/// A clean run of 12 steps whose every step changed its tensors by `ratio` of their norm.
fn moving(ratio: f64) -> Vec<Value> {
    let mut r = clean(12);
    set(&mut r, "step", |_| true, "changed", json!(4));
    set(&mut r, "step", |_| true, "checked", json!(4));
    set(&mut r, "step", |_| true, "update_ratio", json!(ratio));
    r
}

fn unchanged(records: &[Value]) -> Vec<Finding> {
    judge(&processes(records))
        .findings
        .into_iter()
        .filter(|f| f.symptom == Symptom::StepChangesNothing)
        .collect()
}

#[test]
fn a_millionth_of_the_weights_a_step_trains_nothing_and_a_healthy_step_is_quiet() {
    assert!(unchanged(&moving(1e-3)).is_empty());
    assert!(unchanged(&moving(2e-6)).is_empty());
    let tiny = unchanged(&moving(3e-7));
    assert_eq!(tiny.len(), 1, "{tiny:?}");
    assert_eq!(tiny[0].severity, Severity::Warn);
    assert!(
        tiny[0].summary.contains("3.0e-7 of their norm"),
        "{}",
        tiny[0].summary
    );
    // Steps that change nothing at all are still the fail, not this warning.
    let still = unchanged(&moving(1e-12));
    assert_eq!(still.len(), 1);
    assert_eq!(still[0].severity, Severity::Fail);
}

#[test]
fn a_warm_up_from_zero_and_a_converged_line_search_are_not_too_small() {
    // A first step at learning rate 0 (a warm-up), then healthy steps.
    let mut r = moving(1e-3);
    set(
        &mut r,
        "step",
        |s| s["step"] == 1,
        "update_ratio",
        json!(0.0),
    );
    assert!(unchanged(&r).is_empty());
    // L-BFGS closure steps that have converged move little on purpose.
    let mut r = moving(3e-7);
    set(&mut r, "step", |_| true, "closure", json!(true));
    assert!(unchanged(&r).is_empty());
}
