//! Traces written as the Python side writes them, for the judgement's tests.

use crate::trace::read::{parse, Process};
use serde_json::{json, Value};

/// A clean single-process run of `steps` steps: a model, an optimizer, zeroed gradients,
/// changing weights, a falling loss, one loader with shuffled epochs.
pub(crate) fn clean(steps: u64) -> Vec<Value> {
    let mut v = vec![
        json!({"kind": "start", "trace": 1, "pid": 10, "rank": null, "world_size": null}),
        json!({"kind": "model", "model": 0, "class": "Net", "where": "train.py:40",
               "shifts_labels": false, "parameters": 1000, "trainable": 1000, "dropout": 1,
               "batchnorm": 0, "lora": 0, "training": true}),
        json!({"kind": "loader", "loader": 0, "where": "train.py:30", "shuffle": true,
               "sampler": "RandomSampler", "num_workers": 0, "distributed": false}),
        json!({"kind": "optimizer", "optimizer": 0, "class": "AdamW", "where": "train.py:45",
               "tensors": 4, "numel": 1000, "in_models": 1000, "not_in_models": 0,
               "groups": [{"tensors": 4, "numel": 1000, "lr": 0.001}]}),
        json!({"kind": "loss_call", "step": 1, "fn": "cross_entropy", "where": "train.py:60",
               "classes": 10, "targets": 32, "ignored": 0, "ignore_index": -100,
               "probabilities": false, "value": 2.35, "reduction": "mean"}),
        json!({"kind": "grads", "step": 1, "model": 0,
               "groups": [{"name": "fc1", "tensors": 2, "no_grad": 0, "zero_grad": 0,
                           "grad_norm": 0.2, "weight_norm": 3.0},
                          {"name": "fc2", "tensors": 2, "no_grad": 0, "zero_grad": 0,
                           "grad_norm": 0.3, "weight_norm": 1.5}],
               "no_grad": [], "not_in_optimizer": [], "frozen_names": []}),
    ];
    for s in 1..=steps {
        let heavy = s <= 3;
        v.push(
            json!({"kind": "step", "step": s, "optimizer": 0, "time": s as f64 * 0.01,
            "step_s": 0.01, "data_wait_s": 0.001, "forwards": 1, "backwards": 1,
            "loss": 2.3 / (1.0 + 0.05 * s as f64), "lr": 0.001, "training": true,
            "grads_before_backward": if s == 1 { "unknown" } else { "none" },
            "grad_norm": 1.0, "with_grad": 4, "without_grad": 0,
            "changed": if heavy { json!(4) } else { Value::Null },
            "checked": if heavy { json!(4) } else { Value::Null },
            "update_ratio": if heavy { json!(1e-3) } else { Value::Null },
            "memory": {"device": "cpu", "rss": 1.0e8},
            "batch": format!("{s:016x}"), "param_checksum": 1.0 + s as f64,
            "grad_checksum": 0.5}),
        );
    }
    for epoch in 0..2 {
        v.push(
            json!({"kind": "epoch", "loader": 0, "epoch": epoch, "role": "train",
            "batches": 10, "rows": 80, "order": format!("order{epoch}"),
            "rows_fingerprinted": 80, "duplicate_rows": 0, "duplicate_batches": 0,
            "input": {"mean": 0.01, "std": 0.99, "min": -3.0, "max": 3.2},
            "classes": {"0": 40, "1": 40}}),
        );
    }
    v.push(json!({"kind": "end", "reason": "steps", "steps": steps}));
    v
}

/// The records as one trace's text.
pub(crate) fn text(records: &[Value]) -> String {
    records.iter().map(|r| r.to_string() + "\n").collect()
}

/// The records read back as processes.
/// The findings of one symptom that the judge gives `records`.
pub(crate) fn of(
    records: &[Value],
    symptom: crate::finding::Symptom,
) -> Vec<crate::finding::Finding> {
    super::judge(&processes(records))
        .findings
        .into_iter()
        .filter(|f| f.symptom == symptom)
        .collect()
}

pub(crate) fn processes(records: &[Value]) -> Vec<Process> {
    parse(&text(records)).expect("a trace the tests wrote reads")
}

/// Sets `field` to `value` in every record of `kind` for which `pick` holds.
pub(crate) fn set(
    records: &mut [Value],
    kind: &str,
    pick: impl Fn(&Value) -> bool,
    field: &str,
    value: Value,
) {
    for r in records.iter_mut().filter(|r| r["kind"] == kind && pick(r)) {
        r[field] = value.clone();
    }
}

/// Rank `rank` of `world` for a clean run: its start record says so.
pub(crate) fn rank(mut records: Vec<Value>, rank: u32, world: u32) -> Vec<Value> {
    records[0]["rank"] = json!(rank);
    records[0]["world_size"] = json!(world);
    records[0]["pid"] = json!(100 + rank);
    records
}

pub(super) use super::memory_estimate::MIB;

/// Stage points of steps 1 and 2, each step's five points (forward, backward, backward_end,
/// step, step_end) as (peak, held) MiB. Step 1: forward +100 (activations), backward +50,
/// optimizer step +200 (its state); step 2: the peak rises by 10 in its forward, by nothing
/// after.
pub const TWO_STEPS: [[(f64, f64); 5]; 2] = [
    [
        (500.0, 500.0),
        (600.0, 600.0),
        (650.0, 550.0),
        (650.0, 550.0),
        (850.0, 750.0),
    ],
    [
        (850.0, 750.0),
        (860.0, 850.0),
        (860.0, 780.0),
        (860.0, 780.0),
        (860.0, 780.0),
    ],
];

/// One memory point: the peak and what is held, on CUDA or on the CPU.
pub fn stage_point(cuda: bool, peak: f64, held: f64) -> Value {
    if cuda {
        json!({"device": "cuda:0", "rss": 9e8, "rss_peak": 9e8, "allocated": held * MIB,
               "max_allocated": peak * MIB, "reserved": 2.0 * peak * MIB})
    } else {
        json!({"device": "cpu", "rss": held * MIB, "rss_peak": peak * MIB})
    }
}

/// `r` with `steps`' points as the `memory_stages` of its step records 1 and 2.
pub fn with_stage_points(
    mut r: Vec<Value>,
    cuda: bool,
    steps: &[[(f64, f64); 5]; 2],
) -> Vec<Value> {
    let names = ["forward", "backward", "backward_end", "step", "step_end"];
    for (i, pts) in steps.iter().enumerate() {
        let obj: serde_json::Map<String, Value> = names
            .iter()
            .zip(pts)
            .map(|(n, (p, h))| (n.to_string(), stage_point(cuda, *p, *h)))
            .collect();
        for s in r
            .iter_mut()
            .filter(|x| x["kind"] == "step" && x["step"] == i as u64 + 1)
        {
            s["memory_stages"] = Value::Object(obj.clone());
        }
    }
    r
}
