//! Each finding from the records that show it, and none from a clean run.

use super::judge;
use super::test_support::{clean, processes, rank, set};
use crate::finding::{Severity, Symptom};
use serde_json::{json, Value};

fn symptoms(records: &[Value]) -> Vec<(Symptom, Severity)> {
    judge(&processes(records))
        .findings
        .iter()
        .map(|f| (f.symptom, f.severity))
        .collect()
}

fn fails_with(records: &[Value], symptom: Symptom, severity: Severity) {
    let found = symptoms(records);
    assert!(
        found.contains(&(symptom, severity)),
        "expected {symptom} {severity:?}, found {found:?}"
    );
}

#[test]
fn a_clean_run_has_no_finding() {
    for steps in [5, 30] {
        assert_eq!(symptoms(&clean(steps)), [], "{steps} steps");
    }
}

#[test]
fn gradients_carried_across_steps_fail_but_accumulation_does_not() {
    let mut r = clean(10);
    set(
        &mut r,
        "step",
        |s| s["step"] != 1,
        "grads_before_backward",
        json!("carried"),
    );
    fails_with(&r, Symptom::GradsAccumulate, Severity::Fail);
    // Accumulation: four backwards per step, reset after each step.
    let mut r = clean(10);
    set(&mut r, "step", |_| true, "backwards", json!(4));
    assert_eq!(symptoms(&r), []);
}

#[test]
fn a_step_that_changes_nothing_fails_only_when_no_compared_step_changes() {
    let mut r = clean(10);
    set(
        &mut r,
        "step",
        |s| !s["checked"].is_null(),
        "changed",
        json!(0),
    );
    fails_with(&r, Symptom::StepChangesNothing, Severity::Fail);
    // A schedule that reaches 0 and stays there.
    let mut r = clean(12);
    set(
        &mut r,
        "step",
        |s| s["step"].as_u64().unwrap() > 4,
        "lr",
        json!(0.0),
    );
    fails_with(&r, Symptom::StepChangesNothing, Severity::Fail);
    // A warm-up from a learning rate of 0: the first step alone changes nothing.
    let mut r = clean(10);
    set(&mut r, "step", |s| s["step"] == 1, "changed", json!(0));
    assert_eq!(symptoms(&r), []);
}

#[test]
fn optimizer_and_parameter_mismatches_fail() {
    let mut r = clean(5);
    set(&mut r, "optimizer", |_| true, "in_models", json!(0));
    set(&mut r, "optimizer", |_| true, "not_in_models", json!(1000));
    fails_with(&r, Symptom::OptimizerNotModel, Severity::Fail);
    let mut r = clean(5);
    set(
        &mut r,
        "grads",
        |_| true,
        "not_in_optimizer",
        json!(["head.weight"]),
    );
    fails_with(&r, Symptom::ParamsNotOptimized, Severity::Fail);
    let mut r = clean(5);
    set(
        &mut r,
        "grads",
        |_| true,
        "no_grad",
        json!(["fc1.weight", "fc1.bias"]),
    );
    fails_with(&r, Symptom::NoGradient, Severity::Fail);
    let mut r = clean(5);
    set(&mut r, "model", |_| true, "trainable", json!(10));
    fails_with(&r, Symptom::MostlyFrozen, Severity::Warn);
    let mut few_tensors = clean(5);
    set(&mut few_tensors, "model", |_| true, "tensors", json!(27));
    set(
        &mut few_tensors,
        "model",
        |_| true,
        "trainable_tensors",
        json!(1),
    );
    set(&mut few_tensors, "model", |_| true, "trainable", json!(400));
    fails_with(&few_tensors, Symptom::MostlyFrozen, Severity::Warn);
    // LoRA: a small trainable share is the point, lora_A's zero gradient at step 1 expected.
    set(&mut r, "model", |_| true, "lora", json!(4));
    set(
        &mut r,
        "grads",
        |_| true,
        "no_grad",
        json!(["x.lora_A.weight"]),
    );
    assert_eq!(symptoms(&r), []);
}

#[test]
fn label_bugs_fail_and_right_alignments_pass() {
    let labels = |shifts: bool, equal: f64, next: f64, source: &str| {
        json!({"kind": "labels", "step": 1, "model": 0, "shifts_labels": shifts,
               "source": source, "positions": 500, "ignored": 0, "equal_inputs": equal,
               "next_inputs": next, "pad_positions": 0, "pad_labelled": 0})
    };
    let with = |l: Value| {
        let mut r = clean(5);
        r.insert(3, l);
        r
    };
    fails_with(
        &with(labels(true, 0.02, 0.97, "kwargs")),
        Symptom::LabelsShiftedTwice,
        Severity::Fail,
    );
    assert_eq!(symptoms(&with(labels(true, 1.0, 0.03, "kwargs"))), []);
    fails_with(
        &with(labels(false, 1.0, 0.03, "loss")),
        Symptom::LabelsNotShifted,
        Severity::Fail,
    );
    assert_eq!(symptoms(&with(labels(false, 0.03, 1.0, "loss"))), []);
    let mut pad = labels(true, 1.0, 0.0, "kwargs");
    pad["pad_positions"] = json!(100);
    pad["pad_labelled"] = json!(100);
    fails_with(&with(pad), Symptom::PaddingLabelled, Severity::Warn);

    let mut r = clean(5);
    set(&mut r, "loss_call", |_| true, "ignored", json!(32));
    fails_with(&r, Symptom::LabelsAllIgnored, Severity::Fail);
    let mut r = clean(5);
    set(&mut r, "loss_call", |_| true, "probabilities", json!(true));
    fails_with(&r, Symptom::SoftmaxBeforeLoss, Severity::Fail);
    let mut r = clean(5);
    set(&mut r, "loss_call", |_| true, "value", json!(40.0));
    fails_with(&r, Symptom::InitLossOff, Severity::Warn);
    // Below chance is a pretrained start, not a bug.
    set(&mut r, "loss_call", |_| true, "value", json!(0.3));
    assert_eq!(symptoms(&r), []);
}

#[test]
fn mode_events_and_eval_mode_training() {
    let mut r = clean(5);
    set(&mut r, "step", |_| true, "training", json!(false));
    fails_with(&r, Symptom::TrainInEvalMode, Severity::Fail);
    set(&mut r, "model", |_| true, "dropout", json!(0));
    fails_with(&r, Symptom::TrainInEvalMode, Severity::Info);
    for (event, symptom) in [
        ("eval_forward_in_train_mode", Symptom::EvalInTrainMode),
        ("dropout_in_eval", Symptom::DropoutInEval),
        ("batchnorm_updated_in_eval", Symptom::BatchnormUpdatedInEval),
    ] {
        let mut r = clean(5);
        r.insert(
            3,
            json!({"kind": "mode", "step": 2, "event": event, "module": "drop"}),
        );
        fails_with(&r, symptom, Severity::Warn);
    }
}

#[test]
fn data_findings() {
    let mut r = clean(5);
    r.push(
        json!({"kind": "overlap", "train_loader": 0, "other_loader": 1, "train_rows": 800,
                  "other_rows": 100, "shared_rows": 50, "complete": true,
                  "construction": "indices", "construction_rows": 50, "same_rows": false}),
    );
    fails_with(&r, Symptom::TrainEvalOverlap, Severity::Fail);
    let mut r = clean(5);
    set(&mut r, "epoch", |_| true, "order", json!("same"));
    fails_with(&r, Symptom::SameOrderEveryEpoch, Severity::Warn);
    let mut r = clean(5);
    set(&mut r, "epoch", |_| true, "duplicate_batches", json!(3));
    fails_with(&r, Symptom::DuplicateBatches, Severity::Warn);
    let mut r = clean(5);
    set(
        &mut r,
        "epoch",
        |_| true,
        "input",
        json!({"mean": 120.0, "std": 70.0, "min": 0.0, "max": 255.0}),
    );
    fails_with(&r, Symptom::InputsNotNormalised, Severity::Warn);
    let mut r = clean(5);
    set(
        &mut r,
        "epoch",
        |_| true,
        "classes",
        json!({"0": 200, "1": 4}),
    );
    fails_with(&r, Symptom::ClassImbalance, Severity::Warn);
    let mut r = clean(12);
    set(&mut r, "step", |_| true, "step_s", json!(0.05));
    set(&mut r, "step", |_| true, "data_wait_s", json!(0.045));
    fails_with(&r, Symptom::DataWait, Severity::Warn);
}

#[test]
fn nonfinite_names_the_module_and_a_raise_fails() {
    let mut r = clean(5);
    r.insert(
        6,
        json!({"kind": "nonfinite", "step": 4, "phase": "loss", "frames": ["train.py:60"]}),
    );
    r.insert(
        7,
        json!({"kind": "nonfinite", "step": 5, "phase": "forward", "module": "norm",
                       "class": "MyNorm", "frames": ["model.py:12", "train.py:60"]}),
    );
    let d = judge(&processes(&r));
    let f = d
        .findings
        .iter()
        .find(|f| f.symptom == Symptom::Nonfinite)
        .unwrap();
    assert!(f.summary.contains("`norm` (MyNorm)"), "{}", f.summary);
    assert_eq!(f.location.as_deref(), Some("model.py:12"));

    let mut r = clean(5);
    set(&mut r, "end", |_| true, "reason", json!("exception"));
    set(
        &mut r,
        "end",
        |_| true,
        "exception",
        json!("Traceback\n  File \"train.py\", line 9\nValueError: bad"),
    );
    let d = judge(&processes(&r));
    let f = d
        .findings
        .iter()
        .find(|f| f.symptom == Symptom::RunError)
        .unwrap();
    assert!(f.summary.ends_with("ValueError: bad"), "{}", f.summary);
}

#[test]
fn a_program_that_never_steps_is_not_a_pass() {
    let r: Vec<Value> = clean(5)
        .into_iter()
        .filter(|x| x["kind"] != "step")
        .collect();
    fails_with(&r, Symptom::NoOptimizerStep, Severity::Fail);
    assert_eq!(
        judge(&[]).findings[0].symptom,
        Symptom::NoOptimizerStep,
        "no trace at all"
    );
}

fn two_ranks(edit: impl Fn(&mut Vec<Value>, u32)) -> Vec<Value> {
    let mut all = Vec::new();
    for r in 0..2 {
        let mut recs = rank(clean(8), r, 2);
        set(
            &mut recs,
            "model",
            |_| true,
            "wrapper",
            json!("DistributedDataParallel"),
        );
        // Each rank its own data.
        set(&mut recs, "step", |_| true, "batch", Value::Null);
        for s in recs.iter_mut().filter(|x| x["kind"] == "step") {
            s["batch"] = json!(format!("r{r}-{}", s["step"]));
        }
        edit(&mut recs, r);
        all.extend(recs);
    }
    all
}

#[test]
fn correct_ddp_has_no_finding_and_each_rank_bug_is_found() {
    assert_eq!(symptoms(&two_ranks(|_, _| {})), []);
    let same = two_ranks(|recs, _| {
        for s in recs.iter_mut().filter(|x| x["kind"] == "step") {
            s["batch"] = json!(format!("same-{}", s["step"]));
        }
    });
    fails_with(&same, Symptom::RanksSameData, Severity::Fail);
    let drift = two_ranks(|recs, r| {
        for s in recs.iter_mut().filter(|x| x["kind"] == "step") {
            let step = s["step"].as_f64().unwrap();
            s["param_checksum"] = json!(1.0 + step + r as f64 * 0.01 * step);
            s["grad_checksum"] = json!(0.5 + r as f64);
        }
    });
    fails_with(&drift, Symptom::RanksDiverged, Severity::Fail);
    fails_with(&drift, Symptom::GradsNotAveraged, Severity::Fail);
    // A head replaced after wrapping: its gradient sums to zero on every rank, but its norm
    // differs; the rest of the model stays averaged.
    let head = two_ranks(|recs, r| {
        for g in recs.iter_mut().filter(|x| x["kind"] == "grads") {
            g["groups"][1]["grad_norm"] = json!(0.3 + 0.1 * r as f64);
        }
    });
    let d = judge(&processes(&head));
    let f = d
        .findings
        .iter()
        .find(|f| f.symptom == Symptom::GradsNotAveraged)
        .unwrap();
    assert!(f.summary.contains("`fc2`"), "{}", f.summary);
    let one_wrapped = two_ranks(|recs, r| {
        if r == 1 {
            set(recs, "model", |_| true, "wrapper", Value::Null);
        }
    });
    fails_with(&one_wrapped, Symptom::RanksUnwrapped, Severity::Fail);
    let slow = two_ranks(|recs, r| {
        if r == 1 {
            set(recs, "step", |_| true, "step_s", json!(0.5));
        }
    });
    fails_with(&slow, Symptom::RankStraggler, Severity::Warn);
}

#[test]
fn a_finding_on_every_rank_is_one_finding_naming_the_ranks() {
    let both = two_ranks(|recs, _| {
        set(
            recs,
            "step",
            |s| s["step"] != 1,
            "grads_before_backward",
            json!("carried"),
        );
    });
    let d = judge(&processes(&both));
    let f: Vec<_> = d
        .findings
        .iter()
        .filter(|f| f.symptom == Symptom::GradsAccumulate)
        .collect();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].ranks, [0, 1]);
}

#[test]
fn a_small_per_batch_spike_is_information_and_a_large_one_a_warning() {
    for (peak, severity) in [(2.5, Severity::Info), (1000.0, Severity::Warn)] {
        let mut r = clean(30);
        set(&mut r, "step", |_| true, "loss", json!(1.0));
        for s in r.iter_mut().filter(|x| x["kind"] == "step") {
            let step = s["step"].as_u64().unwrap();
            // A little batch noise, and one spike.
            let noise = 0.01 * ((step * 7 % 5) as f64 - 2.0);
            s["loss"] = json!(if step == 20 { peak } else { 1.0 + noise });
        }
        let d = judge(&processes(&r));
        let f = d.findings.iter().find(|f| f.symptom == Symptom::LossSpikes);
        let f = f.unwrap_or_else(|| panic!("{peak}: {:?}", d.findings));
        assert_eq!(f.severity, severity, "{peak}");
        assert_eq!(f.details, ["step 20: batch 0000000000000014"]);
    }
}

#[test]
fn memory_that_grows_every_step_fails_in_bytes_and_flat_memory_does_not() {
    let mut r = clean(30);
    for s in r.iter_mut().filter(|x| x["kind"] == "step") {
        let step = s["step"].as_f64().unwrap();
        // 20 MB more every step on CUDA's allocated counter.
        s["memory"] = json!({"device": "cuda:0", "allocated": 5.0e8 + 2.0e7 * step});
    }
    let d = judge(&processes(&r));
    let f = d
        .findings
        .iter()
        .find(|f| f.symptom == Symptom::MemoryGrowth);
    let f = f.unwrap_or_else(|| panic!("{:?}", d.findings));
    assert_eq!(f.severity, Severity::Fail);
    assert!(
        f.summary.contains(" MB at step") || f.summary.contains(" GB at step"),
        "{}",
        f.summary
    );
    assert!(!f.summary.contains("e8"), "{}", f.summary);
    // The same counter, flat after the first step's optimizer state.
    let mut r = clean(30);
    for s in r.iter_mut().filter(|x| x["kind"] == "step") {
        let step = s["step"].as_u64().unwrap();
        let bytes = if step == 1 { 5.0e8 } else { 7.0e8 };
        s["memory"] = json!({"device": "cuda:0", "allocated": bytes});
    }
    assert_eq!(symptoms(&r), []);
}
