//! Correct programs written in other styles than the run zoo's first scripts: updates written by
//! hand, closure optimizers, probes that could not measure, the training split evaluated on
//! purpose, rows equal by content, an EMA copy. None fails; the bugs beside them still do.

use super::judge;
use super::test_support::{clean, processes, set};
use crate::finding::{Finding, Severity, Symptom};
use serde_json::{json, Value};

fn findings(records: &[Value]) -> Vec<Finding> {
    judge(&processes(records)).findings
}

fn symptoms(records: &[Value]) -> Vec<(Symptom, Severity)> {
    findings(records)
        .iter()
        .map(|f| (f.symptom, f.severity))
        .collect()
}

fn fails(records: &[Value]) -> Vec<(Symptom, Severity)> {
    symptoms(records)
        .into_iter()
        .filter(|x| x.1 == Severity::Fail)
        .collect()
}

/// A clean run whose steps are a hand-written update's (no `torch.optim` optimizer).
fn hand_written(steps: u64) -> Vec<Value> {
    let mut r = clean(steps);
    set(
        &mut r,
        "optimizer",
        |_| true,
        "class",
        json!("hand-written"),
    );
    set(&mut r, "optimizer", |_| true, "where", Value::Null);
    set(&mut r, "optimizer", |_| true, "manual", json!(true));
    set(
        &mut r,
        "optimizer",
        |_| true,
        "groups",
        json!([{"tensors": 4, "numel": 1000, "lr": null}]),
    );
    set(&mut r, "step", |_| true, "lr", Value::Null);
    r
}

#[test]
fn a_hand_written_update_is_judged_like_an_optimizer_and_never_failed_for_having_none() {
    assert_eq!(symptoms(&hand_written(5)), []);
    assert_eq!(symptoms(&hand_written(30)), []);
    // Nothing applies the gradients: every compared step left the parameters as they were.
    let mut r = hand_written(10);
    set(
        &mut r,
        "step",
        |s| !s["checked"].is_null(),
        "changed",
        json!(0),
    );
    let f = findings(&r);
    let still = f
        .iter()
        .find(|f| f.symptom == Symptom::StepChangesNothing)
        .expect("step-changes-nothing");
    assert_eq!(still.severity, Severity::Fail);
    assert!(
        still.summary.contains("no torch.optim optimizer"),
        "{still:?}"
    );
    // A hand-written loop that never resets its gradients.
    let mut r = hand_written(10);
    set(
        &mut r,
        "step",
        |s| s["step"] != 1,
        "grads_before_backward",
        json!("carried"),
    );
    let f = findings(&r);
    let carried = f
        .iter()
        .find(|f| f.symptom == Symptom::GradsAccumulate)
        .expect("grads-accumulate");
    assert!(carried.summary.contains("model.zero_grad()"), "{carried:?}");
}

#[test]
fn a_program_without_a_step_says_what_was_seen_and_fails_only_when_nothing_trains() {
    let mut r: Vec<Value> = clean(5)
        .into_iter()
        .filter(|x| !matches!(x["kind"].as_str(), Some("step" | "optimizer" | "grads")))
        .collect();
    let end = r.len() - 1;
    r[end] = json!({"kind": "end", "reason": "exit", "steps": 0, "forwards": 0,
                    "nograd_forwards": 12, "backwards": 0});
    let f = findings(&r);
    let none = f
        .iter()
        .find(|f| f.symptom == Symptom::NoOptimizerStep)
        .expect("no-optimizer-step");
    assert_eq!(none.severity, Severity::Fail);
    assert!(
        none.summary
            .contains("0 forward(s) with gradients, 12 without, 0 backward call(s)"),
        "{none:?}"
    );
}

#[test]
fn a_probe_that_could_not_measure_is_one_info_line_and_no_finding_of_its_own() {
    // The optimizer probe failed at the first step: no step record, and no fail for that.
    let mut r: Vec<Value> = clean(5)
        .into_iter()
        .filter(|x| !matches!(x["kind"].as_str(), Some("step" | "grads")))
        .collect();
    let end = r.len() - 1;
    r[end] = json!({"kind": "end", "reason": "steps", "steps": 5, "probe_errors":
        ["optimizer: AttributeError: 'OptimizerEntry' object has no attribute 'unresolved'"]});
    let f = findings(&r);
    assert_eq!(
        f.iter()
            .map(|f| (f.symptom, f.severity))
            .collect::<Vec<_>>(),
        [(Symptom::ProbeError, Severity::Info)],
        "{f:?}"
    );
    assert!(f[0]
        .summary
        .starts_with("probe optimizer could not measure: AttributeError"));
    // Beside a full trace: the line alone.
    let mut r = clean(5);
    let end = r.len() - 1;
    r[end]["probe_errors"] = json!(["memory: ZeroDivisionError: division by zero"]);
    assert_eq!(symptoms(&r), [(Symptom::ProbeError, Severity::Info)]);
}

#[test]
fn a_closure_optimizer_with_its_forwards_inside_the_step_is_clean() {
    let mut r = clean(10);
    set(&mut r, "optimizer", |_| true, "class", json!("LBFGS"));
    set(&mut r, "step", |_| true, "forwards", json!(20));
    set(&mut r, "step", |_| true, "backwards", json!(20));
    set(
        &mut r,
        "step",
        |_| true,
        "grads_before_backward",
        json!("unknown"),
    );
    assert_eq!(symptoms(&r), []);
}

fn overlap(fields: Value) -> Vec<Value> {
    let mut o = json!({"kind": "overlap", "train_loader": 0, "other_loader": 1,
                       "train_rows": 900, "other_rows": 100, "shared_rows": 0,
                       "complete": true, "same_dataset": false, "construction": null,
                       "construction_rows": null, "same_rows": false, "within_train": false});
    for (k, v) in fields.as_object().unwrap() {
        o[k] = v.clone();
    }
    let mut r = clean(5);
    r.push(o);
    r
}

fn overlap_finding(fields: Value) -> Option<(Severity, String)> {
    findings(&overlap(fields))
        .into_iter()
        .find(|f| f.symptom == Symptom::TrainEvalOverlap)
        .map(|f| (f.severity, f.summary))
}

#[test]
fn evaluating_the_training_split_on_purpose_is_information() {
    // minGPT: the training dataset object evaluated beside a test split that shares no row.
    let (severity, summary) = overlap_finding(json!({"other_rows": 9500, "train_rows": 9500,
        "shared_rows": 9500, "same_dataset": true, "construction": "same_dataset",
        "construction_rows": 9500, "same_rows": true}))
    .expect("a line");
    assert_eq!(severity, Severity::Info);
    assert!(summary.contains("training split"), "{summary}");
    // Exactly the training rows through another Subset over the same indices.
    let (severity, _) = overlap_finding(json!({"other_rows": 900, "shared_rows": 900,
        "construction": "indices", "construction_rows": 900, "same_rows": true}))
    .expect("a line");
    assert_eq!(severity, Severity::Info);
}

/// Overlap findings of a run whose training loader is compared with several others.
fn overlap_findings(others: &[Value]) -> Vec<(Severity, String)> {
    let mut r = clean(5);
    for (i, fields) in others.iter().enumerate() {
        let mut o = overlap(fields.clone()).pop().unwrap();
        o["other_loader"] = json!(i + 1);
        r.push(o);
    }
    findings(&r)
        .into_iter()
        .filter(|f| f.symptom == Symptom::TrainEvalOverlap)
        .map(|f| (f.severity, f.summary))
        .collect()
}

#[test]
fn a_sample_of_the_training_split_beside_a_held_out_split_is_information() {
    // Subset(train_set, sample): 225 of the 900 training rows, all of them training rows;
    // the validation Subset is disjoint by construction.
    let sample = json!({"other_rows": 225, "shared_rows": 225, "construction": "indices",
        "construction_rows": 225, "within_train": true});
    let validation = json!({"other_rows": 100, "construction": "indices", "construction_rows": 0});
    let found = overlap_findings(&[sample.clone(), validation]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, Severity::Info, "{}", found[0].1);
    assert!(
        found[0].1.contains("sample of the training split"),
        "{}",
        found[0].1
    );
    // A held-out split built apart (a dataset of its own: no construction known), sharing two
    // rows by content, holds out the rest.
    let test_set = json!({"other_rows": 500, "shared_rows": 2});
    let found = overlap_findings(&[sample.clone(), test_set]);
    assert_eq!(found[0].0, Severity::Info, "{}", found[0].1);
    // With no loader held out, a sample of the training rows is that or a validation split cut
    // from rows still trained on: a warning, never a fail.
    let found = overlap_findings(std::slice::from_ref(&sample));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0, Severity::Warn, "{}", found[0].1);
    assert!(found[0].1.contains("cannot tell"), "{}", found[0].1);
    // Another sample of training rows, or a loader equal by content to training rows, is no
    // held-out split.
    let copy = json!({"other_rows": 100, "shared_rows": 100});
    for other in [sample.clone(), copy] {
        let found = overlap_findings(&[sample.clone(), other]);
        assert_eq!(found[0].0, Severity::Warn, "{}", found[0].1);
    }
}

#[test]
fn a_split_only_partly_of_training_rows_fails_beside_a_held_out_split() {
    // Two permutations: 75 of the 100 validation rows are training rows, 25 are not.
    let partial = json!({"shared_rows": 75, "construction": "indices", "construction_rows": 75,
        "within_train": false});
    let test_set = json!({"other_rows": 100, "construction": "indices", "construction_rows": 0});
    let found = overlap_findings(&[partial, test_set]);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0, Severity::Fail, "{}", found[0].1);
}

#[test]
fn a_split_drawn_by_index_from_the_training_rows_still_fails() {
    // Two randperm calls: validation indices overlap the training Subset's.
    let (severity, summary) = overlap_finding(json!({"shared_rows": 75,
        "construction": "indices", "construction_rows": 75}))
    .expect("a finding");
    assert_eq!(severity, Severity::Fail);
    assert!(summary.contains("by construction"), "{summary}");
    // Views of one tensor whose row ranges overlap.
    let (severity, _) = overlap_finding(json!({"shared_rows": 20,
        "construction": "storage", "construction_rows": 20}))
    .expect("a finding");
    assert_eq!(severity, Severity::Fail);
}

#[test]
fn rows_equal_by_content_are_counted_never_failed() {
    for (shared, construction, expected) in [
        (5, json!(null), Severity::Info),
        (33, json!(null), Severity::Warn),
        (100, json!(null), Severity::Warn),
        (100, json!("indices"), Severity::Warn),
        (100, json!("storage"), Severity::Warn),
    ] {
        let rows = if construction.is_null() {
            json!(null)
        } else {
            json!(0)
        };
        let (severity, summary) = overlap_finding(json!({"shared_rows": shared,
            "construction": construction, "construction_rows": rows}))
        .expect("a line");
        assert_eq!(severity, expected, "{shared} {construction}: {summary}");
        assert!(
            summary.contains(&format!("{shared} of the 100")),
            "{summary}"
        );
    }
    assert_eq!(overlap_finding(json!({})), None);
}

/// A clean run with an EMA copy: a second root of the same size, frozen, run under `no_grad`
/// only, so the stepping optimizer holds none of its tensors and it has no `grads` record.
fn with_ema() -> Vec<Value> {
    let mut r = clean(5);
    r.insert(
        2,
        json!({"kind": "model", "model": 1, "class": "Net", "where": "train.py:41",
               "shifts_labels": false, "parameters": 1000, "trainable": 0, "tensors": 4,
               "trainable_tensors": 0, "dropout": 1, "batchnorm": 0, "lora": 0,
               "training": false}),
    );
    set(&mut r, "model", |m| m["model"] == 0, "tensors", json!(4));
    set(
        &mut r,
        "model",
        |m| m["model"] == 0,
        "trainable_tensors",
        json!(4),
    );
    r
}

#[test]
fn an_ema_copy_is_not_a_frozen_trainee_but_a_frozen_trainee_still_warns() {
    assert_eq!(symptoms(&with_ema()), []);
    let mut r = with_ema();
    set(&mut r, "model", |m| m["model"] == 0, "trainable", json!(50));
    assert!(fails(&r).is_empty());
    assert!(symptoms(&r).contains(&(Symptom::MostlyFrozen, Severity::Warn)));
}

#[test]
fn a_closure_optimizers_step_is_not_held_to_the_bound_of_one_gradient_step() {
    let mut r = clean(5);
    set(&mut r, "optimizer", |_| true, "class", json!("LBFGS"));
    r.retain(|x| x["kind"] != "grads");
    r.push(
        json!({"kind": "grads", "step": 1, "optimizer": 0, "model": 0,
               "groups": [{"name": "head", "tensors": 2, "no_grad": 0, "zero_grad": 0,
                           "grad_norm": 0.1, "weight_norm": 5.0, "update_norm": 4.0,
                           "weight_norm_before": 1.0, "frozen": 0}],
               "no_grad": [], "not_in_optimizer": [], "frozen_names": []}),
    );
    assert!(symptoms(&r).contains(&(Symptom::UpdateTooLarge, Severity::Warn)));
    set(&mut r, "step", |_| true, "closure", json!(true));
    assert_eq!(symptoms(&r), []);
}

#[test]
fn gradients_taken_without_a_step_warn_that_the_training_is_not_judged() {
    // torch.func's grad over a dictionary of weights used through functional_call: forwards,
    // no backward, no update of the module's parameters, torch.autograd.grad called each step.
    let mut r: Vec<Value> = clean(5)
        .into_iter()
        .filter(|x| !matches!(x["kind"].as_str(), Some("step" | "optimizer" | "grads")))
        .collect();
    let end = r.len() - 1;
    r[end] = json!({"kind": "end", "reason": "exit", "steps": 0, "forwards": 205,
                    "nograd_forwards": 0, "backwards": 0, "grads_taken": 200});
    let f = findings(&r);
    let none = f
        .iter()
        .find(|f| f.symptom == Symptom::NoOptimizerStep)
        .expect("no-optimizer-step");
    assert_eq!(none.severity, Severity::Warn, "{none:?}");
    assert!(none.summary.contains("200 time(s)"), "{none:?}");
    assert!(fails(&r).is_empty());
    // None taken: nothing trains, a fail as before.
    r[end]["grads_taken"] = json!(0);
    assert_eq!(fails(&r).len(), 1);
}

#[test]
fn backwards_over_leaf_tensors_without_a_step_warn_with_what_was_seen() {
    // No model and no optimizer: input gradients of fresh inputs (a saliency map) reach new
    // leaf tensors at every backward, so no step is taken; what was seen is said, no fail.
    let mut r: Vec<Value> = clean(5)
        .into_iter()
        .filter(|x| {
            !matches!(
                x["kind"].as_str(),
                Some("step" | "optimizer" | "grads" | "model")
            )
        })
        .collect();
    let end = r.len() - 1;
    r[end] = json!({"kind": "end", "reason": "exit", "steps": 0, "forwards": 0,
                    "nograd_forwards": 0, "backwards": 8, "grads_taken": 0,
                    "raw_backwards": 8});
    let f = findings(&r);
    let none = f
        .iter()
        .find(|f| f.symptom == Symptom::NoOptimizerStep)
        .expect("no-optimizer-step");
    assert_eq!(none.severity, Severity::Warn, "{none:?}");
    assert!(none.summary.contains("8 backward pass(es)"), "{none:?}");
    assert!(fails(&r).is_empty());
    // No backward over leaf tensors either: nothing trains, a fail as before.
    r[end]["raw_backwards"] = json!(0);
    assert_eq!(fails(&r).len(), 1);
}

#[test]
fn a_run_that_ends_inside_its_first_closure_step_warns_that_it_was_not_measured() {
    let mut r: Vec<Value> = clean(5)
        .into_iter()
        .filter(|x| !matches!(x["kind"].as_str(), Some("step" | "optimizer" | "grads")))
        .collect();
    let end = r.len() - 1;
    r[end] = json!({"kind": "end", "reason": "signal", "steps": 0, "in_step": true,
                    "forwards": 10, "nograd_forwards": 0, "backwards": 10});
    let f = findings(&r);
    let none = f
        .iter()
        .find(|f| f.symptom == Symptom::NoOptimizerStep)
        .expect("no-optimizer-step");
    assert_eq!(none.severity, Severity::Warn, "{none:?}");
    assert!(
        none.summary.contains("inside its first optimizer step"),
        "{none:?}"
    );
    assert!(fails(&r).is_empty());
}

#[test]
fn each_probe_error_is_one_line_however_many_probes_and_ranks() {
    let errors = json!([
        "labels: KeyError: 'x'",
        "overlap: TypeError: object of type 'Foo' has no len()"
    ]);
    let mut r = clean(5);
    let end = r.len() - 1;
    r[end]["probe_errors"] = errors.clone();
    let f = findings(&r);
    let lines: Vec<&Finding> = f
        .iter()
        .filter(|f| f.symptom == Symptom::ProbeError)
        .collect();
    assert_eq!(lines.len(), 2, "{f:?}");
    assert!(lines[0]
        .summary
        .starts_with("probe labels could not measure"));
    assert!(lines[1]
        .summary
        .starts_with("probe overlap could not measure"));
    // Two ranks with the same error: one line naming both.
    let mut all = Vec::new();
    for rank in 0..2 {
        let mut r = super::test_support::rank(clean(5), rank, 2);
        let end = r.len() - 1;
        r[end]["probe_errors"] = json!(["labels: KeyError: 'x'"]);
        all.extend(r);
    }
    let f = findings(&all);
    let lines: Vec<&Finding> = f
        .iter()
        .filter(|f| f.symptom == Symptom::ProbeError)
        .collect();
    assert_eq!(lines.len(), 1, "{f:?}");
    assert_eq!(lines[0].ranks, [0, 1]);
}
