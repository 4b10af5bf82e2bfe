//! `update-too-large` and `memory-stages` from the records that show them, and neither from
//! records that only look like them.

use super::judge;
use super::test_support::{clean, processes, with_stage_points, MIB, TWO_STEPS};
use super::update::UPDATE_TOO_LARGE;
use crate::finding::{Finding, Severity, Symptom};
use serde_json::{json, Value};

/// `clean(5)` whose `grads` records (steps 1 to 3) carry, per group, (‖Δw‖, ‖w‖ before).
fn with_updates(groups: &[(&str, [(f64, f64); 3])]) -> Vec<Value> {
    let mut r: Vec<Value> = clean(5)
        .into_iter()
        .filter(|x| x["kind"] != "grads")
        .collect();
    for step in 0..3 {
        let gs: Vec<Value> = groups
            .iter()
            .map(|(name, v)| {
                let (u, w) = v[step];
                json!({"name": name, "tensors": 2, "no_grad": 0, "zero_grad": 0,
                       "grad_norm": 0.1, "weight_norm": w + u, "update_norm": u,
                       "weight_norm_before": w, "frozen": 0})
            })
            .collect();
        r.push(
            json!({"kind": "grads", "step": step + 1, "optimizer": 0, "model": 0,
                      "groups": gs, "no_grad": [], "not_in_optimizer": [],
                      "frozen_names": []}),
        );
    }
    r
}

fn found(records: &[Value], symptom: Symptom) -> Option<Finding> {
    judge(&processes(records))
        .findings
        .into_iter()
        .find(|f| f.symptom == symptom)
}

#[test]
fn a_step_that_rewrites_the_weights_warns_with_groups_ratios_step_and_bound() {
    let r = with_updates(&[
        ("fc1", [(0.01, 3.0), (0.01, 3.0), (0.01, 3.0)]),
        ("fc2", [(30.0, 1.5), (30.0, 30.0), (30.0, 42.0)]),
    ]);
    let f = found(&r, Symptom::UpdateTooLarge).expect("a finding");
    assert_eq!(f.severity, Severity::Warn);
    assert_eq!(f.step, 1.0);
    assert!((f.get("max_update_ratio").unwrap() - 20.0).abs() < 1e-9);
    assert_eq!(f.get("bound"), Some(UPDATE_TOO_LARGE));
    assert_eq!(f.get("groups_over"), Some(1.0));
    assert_eq!(f.get("groups_measured"), Some(2.0));
    assert!(f.summary.contains("fc2 20.00"), "{}", f.summary);
    assert!(!f.summary.contains("fc1"), "{}", f.summary);
    assert!(f.details[0].starts_with("fc2:"), "{:?}", f.details);
    assert_eq!(f.location.as_deref(), Some("train.py:45"));
}

#[test]
fn the_bound_separates_and_usual_ratios_pass() {
    let below = UPDATE_TOO_LARGE * 0.9;
    let above = UPDATE_TOO_LARGE * 1.1;
    let r = with_updates(&[("fc", [(below, 1.0), (1e-3, 1.0), (1e-3, 1.0)])]);
    assert!(found(&r, Symptom::UpdateTooLarge).is_none());
    // Found at the step where it happens, not only at the first.
    let r = with_updates(&[("fc", [(1e-3, 1.0), (1e-3, 1.0), (above, 1.0)])]);
    let f = found(&r, Symptom::UpdateTooLarge).expect("a finding");
    assert_eq!(f.step, 3.0);
    // A run of usual updates: nothing at all.
    let r = with_updates(&[("a", [(1e-3, 1.0); 3]), ("b", [(0.1, 1.0); 3])]);
    let all = judge(&processes(&r)).findings;
    assert!(all.is_empty(), "{all:?}");
}

#[test]
fn a_group_without_a_scale_of_its_own_is_not_judged() {
    // Zero-initialised: 0 before the first step, then any update is of the order of its norm.
    let r = with_updates(&[
        ("pos", [(1e-3, 0.0), (5e-3, 1e-3), (1e-3, 6e-3)]),
        ("fc", [(1e-3, 1.0); 3]),
    ]);
    assert!(found(&r, Symptom::UpdateTooLarge).is_none());
    // A diverged step (non-finite update) is the nonfinite finding's, not this one's.
    let mut r = with_updates(&[("fc", [(1e-3, 1.0); 3])]);
    for g in r.iter_mut().filter(|x| x["kind"] == "grads") {
        g["groups"][0]["update_norm"] = json!("inf");
    }
    assert!(found(&r, Symptom::UpdateTooLarge).is_none());
    // A trace written before weight_norm_before existed: nothing to judge.
    let mut r = with_updates(&[("fc", [(30.0, 1.0); 3])]);
    for g in r.iter_mut().filter(|x| x["kind"] == "grads") {
        g["groups"][0]
            .as_object_mut()
            .unwrap()
            .remove("weight_norm_before");
    }
    assert!(found(&r, Symptom::UpdateTooLarge).is_none());
}

/// `clean(5)` with stage points on steps 1 and 2: each step's five points as (peak, held).
fn with_stages(cuda: bool, steps: [[(f64, f64); 5]; 2]) -> Vec<Value> {
    with_stage_points(clean(5), cuda, &steps)
}

#[test]
fn the_stages_of_the_first_two_steps_are_reported_as_measured() {
    for cuda in [true, false] {
        // Step 1: forward +100 (activations), backward +50, optimizer step +200 (its state).
        // Step 2: the peak rises by 10 in its forward, by nothing after.
        let r = with_stages(cuda, TWO_STEPS);
        let f = found(&r, Symptom::MemoryStages).expect("a finding");
        assert_eq!(f.severity, Severity::Info, "cuda {cuda}");
        let mib = |name| f.get(name).unwrap() / MIB;
        assert!((mib("step1_forward_bytes") - 100.0).abs() < 1e-6);
        assert!((mib("step1_backward_bytes") - 50.0).abs() < 1e-6);
        assert!((mib("step1_optimizer_step_bytes") - 200.0).abs() < 1e-6);
        assert!((mib("step2_forward_bytes") - 10.0).abs() < 1e-6);
        assert!((mib("second_over_first_bytes") - 10.0).abs() < 1e-6);
        assert!((mib("first_step_peak_rise_bytes") - 350.0).abs() < 1e-6);
        let what = if cuda {
            "max_memory_allocated"
        } else {
            "resident"
        };
        assert!(f.summary.contains(what), "{}", f.summary);
        assert!(
            f.summary
                .contains("step 1 +100.0 / +50.0 / +200.0 MiB, step 2 +10.0 / +0.0 / +0.0"),
            "{}",
            f.summary
        );
        assert!(f.details.iter().any(|d| d.contains("held +200.0 MiB")));
    }
}

#[test]
fn a_second_step_far_above_the_first_is_a_spike() {
    let flat = [(1000.0, 1000.0); 5];
    let mut second = [(1000.0, 1000.0); 5];
    for (i, p) in second.iter_mut().enumerate() {
        if i > 0 {
            *p = (3000.0, 1000.0);
        }
    }
    let mut first = flat;
    first[4] = (1000.0 + 100.0, 1000.0);
    let r = with_stages(true, [first, second]);
    let f = found(&r, Symptom::MemoryStages).expect("a finding");
    assert_eq!(f.severity, Severity::Warn);
    assert!(f.summary.contains("spike"), "{}", f.summary);
    // The same rise below the floor is not a spike, however small the first step was.
    let mut small = [(10.0, 10.0); 5];
    small[4] = (12.0, 10.0);
    let mut second = [(12.0, 10.0); 5];
    second[4] = (60.0, 10.0);
    let r = with_stages(false, [small, second]);
    assert_eq!(
        found(&r, Symptom::MemoryStages).unwrap().severity,
        Severity::Info
    );
}

#[test]
fn a_point_not_reached_leaves_its_stages_unknown() {
    let mut r = with_stages(false, [[(100.0, 100.0); 5], [(100.0, 100.0); 5]]);
    for s in r.iter_mut().filter(|x| x["kind"] == "step") {
        if let Some(m) = s["memory_stages"].as_object_mut() {
            m.remove("backward");
        }
    }
    let f = found(&r, Symptom::MemoryStages).expect("a finding");
    assert!(
        f.summary.contains("step 1 ? / ? / +0.0 MiB"),
        "{}",
        f.summary
    );
    assert!(f.get("step1_forward_bytes").unwrap().is_nan());
    // No stage points at all (a trace from before they existed): no finding.
    let r: Vec<Value> = clean(5);
    assert!(found(&r, Symptom::MemoryStages).is_none());
}
