//! Host-device synchronisations per step: nothing where they were not counted or none was
//! made, info for a few a step, a warning for many, named by the line that made most.

use super::judge;
use super::syncs::WARN_PER_STEP;
use super::test_support::{clean, processes, set};
use crate::finding::{Finding, Severity, Symptom};
use serde_json::{json, Value};

/// A clean run whose steps 2 and 3 counted these waits (`(where, count)` per step).
fn counted(per_step: &[(&str, u64)]) -> Vec<Value> {
    let mut r = clean(6);
    let total: u64 = per_step.iter().map(|(_, n)| n).sum();
    let sites: Vec<Value> = per_step
        .iter()
        .map(|(w, n)| json!({"where": w, "count": n}))
        .collect();
    let window = |s: &Value| matches!(s["step"].as_u64(), Some(2 | 3));
    set(&mut r, "step", window, "syncs", json!(total));
    set(&mut r, "step", window, "sync_sites", json!(sites));
    r
}

fn syncs_finding(records: &[Value]) -> Option<Finding> {
    judge(&processes(records))
        .findings
        .into_iter()
        .find(|f| f.symptom == Symptom::HostSyncs)
}

#[test]
fn nothing_is_said_where_nothing_was_counted_or_nothing_waited() {
    assert!(syncs_finding(&clean(6)).is_none());
    assert!(syncs_finding(&counted(&[])).is_none());
}

#[test]
fn one_wait_a_step_is_information_with_its_line() {
    let f = syncs_finding(&counted(&[("train.py:52", 1)])).expect("a finding");
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(f.location.as_deref(), Some("train.py:52"));
    assert_eq!(f.step, 2.0);
    assert!(
        f.summary
            .contains("wait for the GPU once a step (steps 2, 3,"),
        "{}",
        f.summary
    );
}

#[test]
fn many_waits_a_step_warn_and_name_the_busiest_lines_first() {
    let many = WARN_PER_STEP as u64;
    let f = syncs_finding(&counted(&[("train.py:40", many - 1), ("train.py:52", 1)]))
        .expect("a finding");
    assert_eq!(f.severity, Severity::Warn);
    assert_eq!(f.location.as_deref(), Some("train.py:40"));
    let first = f.summary.find("train.py:40").expect("named");
    let second = f.summary.find("train.py:52").expect("named");
    assert!(first < second, "{}", f.summary);
    let per_step = f.numbers.iter().find(|(k, _)| *k == "syncs_per_step");
    assert_eq!(per_step.map(|(_, v)| *v), Some(WARN_PER_STEP));
    // One fewer a step stays information: the threshold is where it says.
    let f = syncs_finding(&counted(&[("train.py:40", many - 1)])).expect("a finding");
    assert_eq!(f.severity, Severity::Info);
}
