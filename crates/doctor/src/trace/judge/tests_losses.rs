//! `loss-graph-kept` (earlier steps' losses alive with their graph) and `loss-summed` (a loss
//! that sums its terms over the batch, warned of when the steps were too large).

use super::judge;
use super::test_support::{clean, of, processes, set};
use crate::finding::{Severity, Symptom};
use serde_json::{json, Value};

/// A clean run of `steps` steps whose step k finds `alive(k)` of the previous steps' losses
/// alive (of at most 16 watched), memory growing by `growth` bytes a step; their backward did
/// not retain the graph.
fn kept(steps: u64, alive: impl Fn(u64) -> u64, growth: f64) -> Vec<Value> {
    let mut r = clean(steps);
    for rec in r.iter_mut().filter(|x| x["kind"] == "step") {
        let k = rec["step"].as_u64().unwrap();
        rec["losses_watched"] = json!((k - 1).min(16));
        rec["losses_alive"] = json!(alive(k).min((k - 1).min(16)));
        rec["losses_retained"] = json!(0);
        rec["memory"] = json!({"device": "cpu", "rss": 1.0e8 + growth * k as f64});
    }
    r
}

#[test]
fn every_step_kept_is_a_warning_naming_the_memory() {
    let f = of(
        &kept(30, |k| k - 1, 2.0 * 1024.0 * 1024.0),
        Symptom::LossGraphKept,
    );
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].severity, Severity::Warn);
    assert_eq!(f[0].step, 17.0);
    assert!(
        f[0].summary.contains("the 16 steps before it")
            && f[0].summary.contains("at every step after")
            && f[0]
                .summary
                .contains("memory grew by 56.0 MiB over the 28 steps from step 2")
            && f[0].summary.contains("its graph's nodes only"),
        "{}",
        f[0].summary
    );
    // Kept after backward(retain_graph=True): each holds its activations.
    let mut r = kept(30, |k| k - 1, 0.0);
    for rec in r.iter_mut().filter(|x| x["kind"] == "step") {
        rec["losses_retained"] = rec["losses_alive"].clone();
    }
    let f = of(&r, Symptom::LossGraphKept);
    assert_eq!(f[0].get("graph_retained"), Some(1.0));
    assert!(
        f[0].summary.contains("saved activations"),
        "{}",
        f[0].summary
    );
}

#[test]
fn a_plain_loop_the_previous_loss_and_a_short_window_are_quiet() {
    assert!(of(&kept(30, |_| 0, 0.0), Symptom::LossGraphKept).is_empty());
    assert!(of(&kept(30, |_| 1, 0.0), Symptom::LossGraphKept).is_empty());
    // A deque of the last ten losses: bounded, never every watched step.
    assert!(of(&kept(30, |_| 10, 0.0), Symptom::LossGraphKept).is_empty());
    // Every loss kept, but fewer than 16 earlier steps watched.
    assert!(of(&kept(16, |k| k - 1, 0.0), Symptom::LossGraphKept).is_empty());
    // A trace without the fields says nothing.
    assert!(of(&clean(30), Symptom::LossGraphKept).is_empty());
}

/// A clean run with SGD at lr 0.1 whose heavy steps' loss reduces `elements` terms by
/// `reduction` through `grad_fn`, on batches of 128 rows.
fn reduced(grad_fn: &str, reduction: &str, elements: u64) -> Vec<Value> {
    let mut r = clean(10);
    set(&mut r, "optimizer", |_| true, "class", json!("SGD"));
    set(&mut r, "step", |_| true, "lr", json!(0.1));
    set(
        &mut r,
        "step",
        |s| s["step"].as_u64() <= Some(3),
        "loss_reduction",
        json!({"grad_fn": grad_fn, "reduction": reduction, "elements": elements}),
    );
    set(
        &mut r,
        "step",
        |s| s["step"].as_u64() <= Some(3),
        "input",
        json!({"model": 0, "argument": "x", "shape": [128, 32], "dtype": "float32"}),
    );
    r
}

/// `r` with a first step that moved a group by 5x its weight norm.
fn too_large(mut r: Vec<Value>) -> Vec<Value> {
    for g in r.iter_mut().filter(|x| x["kind"] == "grads") {
        g["step"] = json!(1);
        g["groups"][0]["update_norm"] = json!(15.0);
        g["groups"][0]["weight_norm_before"] = json!(3.0);
    }
    r
}

#[test]
fn a_sum_over_the_batch_with_sgd_is_information_alone_and_a_warning_with_too_large_steps() {
    let calm = of(
        &reduced("NllLossBackward0", "sum", 128),
        Symptom::LossSummed,
    );
    assert_eq!(calm.len(), 1, "{calm:?}");
    assert_eq!(calm[0].severity, Severity::Info);
    let rough = too_large(reduced("NllLossBackward0", "sum", 128));
    let all = judge(&processes(&rough)).findings;
    let f: Vec<_> = all
        .iter()
        .filter(|f| f.symptom == Symptom::LossSummed)
        .collect();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Warn);
    assert_eq!(f[0].get("step_factor"), Some(128.0));
    assert!(
        f[0].summary
            .contains("a sum over 128 terms (the batch's 128 rows)")
            && f[0].summary.contains("reduction=\"sum\"")
            && f[0].summary.contains("update-too-large"),
        "{}",
        f[0].summary
    );
    let update = all
        .iter()
        .find(|f| f.symptom == Symptom::UpdateTooLarge)
        .expect("the update is too large");
    assert!(
        update.details[0].contains("sum over 128 terms"),
        "{:?}",
        update.details
    );
}

#[test]
fn a_dot_sum_over_rows_and_positions_counts_and_a_sum_of_a_few_losses_does_not() {
    let f = of(
        &too_large(reduced("SumBackward0", "sum", 128 * 64)),
        Symptom::LossSummed,
    );
    assert_eq!(f.len(), 1);
    assert!(f[0].summary.contains("batch 128 x 64"), "{}", f[0].summary);
    // torch.stack([l1, l2, l3]).sum(): three losses, not the batch.
    assert!(of(
        &too_large(reduced("SumBackward0", "sum", 3)),
        Symptom::LossSummed
    )
    .is_empty());
}

#[test]
fn a_mean_an_adaptive_optimizer_or_an_unknown_reduction_is_quiet() {
    assert!(of(
        &too_large(reduced("NllLossBackward0", "mean", 128)),
        Symptom::LossSummed
    )
    .is_empty());
    let mut adam = too_large(reduced("NllLossBackward0", "sum", 128));
    set(&mut adam, "optimizer", |_| true, "class", json!("AdamW"));
    assert!(of(&adam, Symptom::LossSummed).is_empty());
    let mut unknown = too_large(reduced("DivBackward0", "sum", 128));
    set(
        &mut unknown,
        "step",
        |s| s["step"].as_u64() <= Some(3),
        "loss_reduction",
        json!({"grad_fn": "DivBackward0", "reduction": null, "elements": null}),
    );
    assert!(of(&unknown, Symptom::LossSummed).is_empty());
}
