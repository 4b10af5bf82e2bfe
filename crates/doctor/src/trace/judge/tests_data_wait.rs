//! `data-wait`: a share of each step spent waiting on the loader, above an absolute floor, with
//! the remedies that fit the loader as it was set up.

use super::judge;
use super::test_support::{clean, processes, set};
use crate::finding::{Finding, Symptom};
use serde_json::{json, Value};

/// A clean run of 12 steps, each `step_s` long with `wait_s` of it spent waiting on a loader
/// with `workers` worker processes.
fn waiting(step_s: f64, wait_s: f64, workers: u64) -> Vec<Value> {
    let mut r = clean(12);
    set(&mut r, "step", |_| true, "step_s", json!(step_s));
    set(&mut r, "step", |_| true, "data_wait_s", json!(wait_s));
    set(&mut r, "loader", |_| true, "num_workers", json!(workers));
    r
}

fn data_wait(records: &[Value]) -> Option<Finding> {
    judge(&processes(records))
        .findings
        .into_iter()
        .find(|f| f.symptom == Symptom::DataWait)
}

#[test]
fn a_toy_step_that_waits_a_millisecond_or_two_is_not_input_bound() {
    // 2 ms of a 3 ms step: two thirds of it, but the fixed cost of any fetch.
    assert!(data_wait(&waiting(0.003, 0.002, 0)).is_none());
    assert!(data_wait(&waiting(0.009, 0.008, 2)).is_none());
    // The same share of steps a hundred times longer is worth a warning.
    assert!(data_wait(&waiting(0.3, 0.2, 0)).is_some());
}

#[test]
fn the_remedy_fits_the_loader_and_no_worker_hypothesis_is_offered_to_a_loader_with_workers() {
    let none = data_wait(&waiting(0.2, 0.15, 0)).expect("input-bound");
    assert!(none.summary.contains("num_workers=0"), "{}", none.summary);
    assert!(none.ruled_out.is_empty());
    let two = data_wait(&waiting(0.2, 0.15, 2)).expect("input-bound");
    assert!(
        two.summary.contains("its 2 worker processes"),
        "{}",
        two.summary
    );
    assert!(!two.summary.contains("num_workers=0"), "{}", two.summary);
    assert_eq!(two.ruled_out, ["num_workers=0"]);
    let n = |f: &Finding, k: &str| f.numbers.iter().find(|(n, _)| *n == k).map(|x| x.1);
    assert_eq!(n(&two, "num_workers"), Some(2.0));
    assert!((n(&two, "wait_per_step_s").unwrap() - 0.15).abs() < 1e-12);
}
