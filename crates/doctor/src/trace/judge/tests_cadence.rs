//! Traces whose light steps were measured every few steps (`cadence`): the unmeasured steps'
//! short records (loss, times, learning rate) change no verdict, and what the measured ones
//! show is still found.

use super::judge;
use super::test_support::{clean, processes};
use crate::finding::{Severity, Symptom};
use serde_json::{json, Value};

/// The fields an unmeasured step keeps (torch/run/mldebug_run/probes/optim.py, `count_post`).
const COUNTED: [&str; 18] = [
    "kind",
    "step",
    "optimizer",
    "time",
    "step_s",
    "data_wait_s",
    "forwards",
    "nograd_forwards",
    "backwards",
    "loss",
    "lr",
    "training",
    "closure",
    "measured",
    "memory",
    "losses_alive",
    "losses_retained",
    "losses_watched",
];

/// `records` as the probes write them under a stride `k` from step 14 (decided at step 11):
/// the other light steps keep only their counters, times, loss and CPU memory (CUDA's
/// allocator counters are read on measured steps only).
fn thinned(mut records: Vec<Value>, k: u64) -> Vec<Value> {
    for r in records.iter_mut().filter(|r| r["kind"] == "step") {
        let s = r["step"].as_u64().unwrap();
        if s >= 14 && s % k != 0 {
            r["measured"] = json!(false);
            let kept: serde_json::Map<String, Value> = r
                .as_object()
                .unwrap()
                .iter()
                .filter(|(key, _)| COUNTED.contains(&key.as_str()))
                .filter(|(key, v)| {
                    *key != "memory" || !v["device"].as_str().is_some_and(|d| d.starts_with("cuda"))
                })
                .map(|(key, v)| (key.clone(), v.clone()))
                .collect();
            *r = Value::Object(kept);
        }
    }
    let at = records.iter().position(|r| r["kind"] == "end").unwrap();
    records.insert(
        at,
        json!({"kind": "cadence", "step": 11, "stride": k, "from": 14, "fixed": false,
               "measure_s": 0.0004, "step_s": 0.0015, "budget": 0.03, "calibrated": 8}),
    );
    records
}

fn symptoms(records: &[Value]) -> Vec<(Symptom, Severity)> {
    let mut v: Vec<_> = judge(&processes(records))
        .findings
        .iter()
        .map(|f| (f.symptom, f.severity))
        .collect();
    v.sort_by_key(|x| format!("{x:?}"));
    v
}

#[test]
fn a_clean_run_judges_the_same_measured_every_step_or_every_sixteenth() {
    let every = clean(120);
    let sparse = thinned(clean(120), 16);
    assert_eq!(symptoms(&every), symptoms(&sparse));
    let p = processes(&sparse);
    let c = p[0].cadence.as_ref().expect("the cadence record is read");
    assert_eq!((c.stride, c.from), (16, 14));
    assert_eq!(p[0].steps.len(), 120);
    // Steps 1-13, then 16, 32, ..., 112.
    assert_eq!(
        p[0].steps.iter().filter(|s| s.is_measured()).count(),
        13 + 7
    );
}

#[test]
fn what_the_measured_steps_show_is_still_found() {
    // Memory rising 20 MB a step, seen on the measured steps only.
    let mut r = clean(120);
    for s in r.iter_mut().filter(|x| x["kind"] == "step") {
        let step = s["step"].as_f64().unwrap();
        s["memory"] = json!({"device": "cuda:0", "allocated": 5.0e8 + 2.0e7 * step});
    }
    assert!(symptoms(&thinned(r, 16)).contains(&(Symptom::MemoryGrowth, Severity::Fail)));
    // Each step moving the weights by 1e-8 of their norm.
    let mut r = clean(120);
    for s in r.iter_mut().filter(|x| x["kind"] == "step") {
        s["changed"] = json!(4);
        s["checked"] = json!(4);
        s["update_ratio"] = json!(1e-8);
    }
    assert!(symptoms(&thinned(r, 16))
        .iter()
        .any(|(s, _)| *s == Symptom::StepChangesNothing));
    // Every step's loss kept in a list (every step's loss is watched and counted, measured or
    // not): step 17 says so; a deque of the last ten says nothing.
    let kept = |alive: &dyn Fn(u64) -> u64| {
        let mut r = clean(400);
        for rec in r.iter_mut().filter(|x| x["kind"] == "step") {
            let s = rec["step"].as_u64().unwrap();
            rec["losses_watched"] = json!((s - 1).min(16));
            rec["losses_alive"] = json!(alive(s).min((s - 1).min(16)));
            rec["losses_retained"] = json!(0);
        }
        let f: Vec<_> = judge(&processes(&thinned(r, 16)))
            .findings
            .into_iter()
            .filter(|f| f.symptom == Symptom::LossGraphKept)
            .collect();
        f
    };
    let f = kept(&|s| s - 1);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].step, 17.0);
    assert!(
        f[0].summary.contains("the 16 steps before it")
            && f[0].summary.contains("at every step after"),
        "{}",
        f[0].summary
    );
    assert!(kept(&|_| 10).is_empty());
}

#[test]
fn a_nan_loss_on_an_unmeasured_step_is_found() {
    let mut r = thinned(clean(120), 16);
    for s in r.iter_mut().filter(|x| x["kind"] == "step") {
        if s["step"].as_u64().unwrap() >= 57 {
            s["loss"] = json!("NaN");
        }
    }
    assert!(
        !processes(&r)[0].steps[56].is_measured(),
        "step 57 is one the stride leaves out"
    );
    let f = judge(&processes(&r));
    assert!(
        f.findings
            .iter()
            .any(|f| f.symptom == Symptom::LossNonfinite && f.step == 57.0),
        "{:?}",
        f.findings
    );
}
