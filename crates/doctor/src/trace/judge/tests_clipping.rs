//! The program's clips (`clip-before-unscale`, a jump the clip cut, a hand-written update's
//! norm after its clip) and the optimizer groups' decay (`decay-on-norms`, `adam-l2-decay`).

use super::test_support::{clean, of as found, set};
use crate::finding::{Severity, Symptom};
use serde_json::{json, Value};

/// A clean run whose every step clipped with `clip`.
fn clipping(clip: Value) -> Vec<Value> {
    let mut r = clean(12);
    set(&mut r, "step", |_| true, "clips", json!([clip]));
    r
}

#[test]
fn a_clip_on_scaled_gradients_that_cuts_every_step_is_a_fail_with_its_numbers() {
    // Measured on the run zoo's amp_clip_before_unscale: max_norm 1.0, scale 65536, the clip
    // saw norms near 20000 (a true norm near 0.3).
    let r = clipping(
        json!({"kind": "norm", "threshold": 1.0, "norm_type": 2.0, "tensors": 6,
                           "scaled": true, "norm": 20000.0, "scale": 65536.0}),
    );
    let f = found(&r, Symptom::ClipBeforeUnscale);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].severity, Severity::Fail);
    assert_eq!(f[0].get("cut"), Some(20000.0));
    assert_eq!(f[0].get("steps_scaled"), Some(12.0));
    let true_norm = f[0].get("true_norm").unwrap();
    assert!((true_norm - 20000.0 / 65536.0).abs() < 1e-9);
    assert!(
        f[0].summary.contains("before scaler.unscale_") && f[0].summary.contains("1.5e-5"),
        "{}",
        f[0].summary
    );
}

#[test]
fn a_clip_on_scaled_gradients_that_cuts_little_warns_and_an_unscaled_clip_is_quiet() {
    let r = clipping(
        json!({"kind": "norm", "threshold": 5000.0, "norm_type": 2.0,
                           "tensors": 6, "scaled": true, "norm": 20000.0, "scale": 65536.0}),
    );
    let f = found(&r, Symptom::ClipBeforeUnscale);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Warn);
    // clip_grad_value_ returns no norm: the order is wrong, by how much is unknown.
    let r = clipping(
        json!({"kind": "value", "threshold": 1.0, "tensors": 6, "scaled": true,
                           "norm": null, "scale": 1024.0}),
    );
    assert_eq!(
        found(&r, Symptom::ClipBeforeUnscale)[0].severity,
        Severity::Warn
    );
    // Unscaled first: the clip saw the true norm.
    let r = clipping(
        json!({"kind": "norm", "threshold": 1.0, "norm_type": 2.0, "tensors": 6,
                           "scaled": false, "norm": 0.3, "scale": null}),
    );
    assert!(found(&r, Symptom::ClipBeforeUnscale).is_empty());
    assert!(found(&clean(12), Symptom::ClipBeforeUnscale).is_empty());
}

/// 20 steps whose gradient norm wanders around 1 and jumps to 30 at steps 8 and 14 (one jump
/// alone, with no loss trouble after it, is information whatever cut it).
fn jumping() -> Vec<Value> {
    let mut r = clean(20);
    for s in 1..=20u64 {
        let g = if s == 8 || s == 14 {
            30.0
        } else {
            1.0 + 0.1 * ((s * 7 % 5) as f64 - 2.0)
        };
        set(&mut r, "step", |x| x["step"] == s, "grad_norm", json!(g));
    }
    r
}

#[test]
fn a_jump_of_the_gradient_norm_that_the_programs_clip_cut_is_information() {
    let jump = found(&jumping(), Symptom::GradNormExplosion);
    assert_eq!(jump.len(), 1, "{jump:?}");
    assert_eq!(jump[0].severity, Severity::Warn);
    // A hand-written update measures the norm before its clip at 0.25, which cut the jumps.
    let mut r = jumping();
    set(&mut r, "optimizer", |_| true, "manual", json!(true));
    set(
        &mut r,
        "optimizer",
        |_| true,
        "class",
        json!("hand-written"),
    );
    set(
        &mut r,
        "step",
        |s| s["step"] == 8 || s["step"] == 14,
        "clips",
        json!([{"kind": "norm", "threshold": 0.25, "norm_type": 2.0, "tensors": 4,
                "scaled": false, "norm": 30.0, "scale": null}]),
    );
    let jump = found(&r, Symptom::GradNormExplosion);
    assert_eq!(jump.len(), 1);
    assert_eq!(jump[0].severity, Severity::Info);
    assert!(jump[0]
        .summary
        .contains("cut the gradients to a norm of 0.25"));
    // A clip whose threshold is above the jumps did not cut them: still a warning.
    set(
        &mut r,
        "step",
        |s| s["step"] == 8 || s["step"] == 14,
        "clips",
        json!([{"kind": "norm", "threshold": 100.0, "norm_type": 2.0, "tensors": 4,
                "scaled": false, "norm": 30.0, "scale": null}]),
    );
    assert_eq!(
        found(&r, Symptom::GradNormExplosion)[0].severity,
        Severity::Warn
    );
}

#[test]
fn a_hand_written_update_is_judged_with_the_norm_after_its_clip() {
    // Steps that move nothing: the words give the norm the update used (after the clip).
    let mut r = clean(12);
    set(&mut r, "optimizer", |_| true, "manual", json!(true));
    set(&mut r, "step", |_| true, "changed", json!(4));
    set(&mut r, "step", |_| true, "checked", json!(4));
    set(&mut r, "step", |_| true, "update_ratio", json!(3e-7));
    set(&mut r, "step", |_| true, "grad_norm", json!(2.0));
    set(
        &mut r,
        "step",
        |_| true,
        "clips",
        json!([{"kind": "norm", "threshold": 1e-5, "norm_type": 2.0, "tensors": 4,
                "scaled": false, "norm": 2.0, "scale": null}]),
    );
    let f = found(&r, Symptom::StepChangesNothing);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].get("grad_norm"), Some(1e-5));
}

/// A clean run whose optimizer is `class` with `groups`.
fn optimizer(class: &str, groups: Value) -> Vec<Value> {
    let mut r = clean(6);
    set(&mut r, "optimizer", |_| true, "class", json!(class));
    set(&mut r, "optimizer", |_| true, "groups", groups);
    r
}

#[test]
fn decay_on_norm_weights_biases_and_embeddings_is_a_note_with_the_counts() {
    let everything = |decay: f64| {
        json!([{"tensors": 10, "numel": 1000, "lr": 1e-3, "weight_decay": decay,
            "kinds": {"norm": {"tensors": 4, "numel": 128}, "bias": {"tensors": 3, "numel": 96},
                      "embedding": {"tensors": 1, "numel": 640}}}])
    };
    // AdamW's own default over one group is torch's choice, not the program's: no note.
    assert!(found(&optimizer("AdamW", everything(0.01)), Symptom::DecayOnNorms).is_empty());
    let f = found(&optimizer("SGD", everything(0.01)), Symptom::DecayOnNorms);
    assert_eq!(f.len(), 1, "{f:?}");
    let f = found(&optimizer("AdamW", everything(0.1)), Symptom::DecayOnNorms);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].severity, Severity::Info);
    assert_eq!(f[0].get("tensors"), Some(8.0));
    assert_eq!(f[0].get("elements"), Some(864.0));
    assert!(
        f[0].summary.contains("4 normalisation-layer")
            && f[0].summary.contains("3 bias")
            && f[0].summary.contains("weight_decay 0.1"),
        "{}",
        f[0].summary
    );
    // The recipe: matrices decayed, 1-D parameters and embeddings in a group without decay.
    let split = json!([
        {"tensors": 2, "numel": 600, "lr": 1e-3, "weight_decay": 0.1, "kinds": {}},
        {"tensors": 8, "numel": 400, "lr": 1e-3, "weight_decay": 0.0,
         "kinds": {"norm": {"tensors": 4, "numel": 128}, "bias": {"tensors": 3, "numel": 96}}}]);
    assert!(found(&optimizer("AdamW", split), Symptom::DecayOnNorms).is_empty());
    // Decayed embeddings beside a no-decay group for the 1-D parameters: the Trainer's and
    // nanoGPT's recipe, no note.
    let trainer = json!([
        {"tensors": 3, "numel": 800, "lr": 1e-3, "weight_decay": 0.01,
         "kinds": {"embedding": {"tensors": 2, "numel": 640}}},
        {"tensors": 7, "numel": 200, "lr": 1e-3, "weight_decay": 0.0,
         "kinds": {"norm": {"tensors": 4, "numel": 128}, "bias": {"tensors": 3, "numel": 72}}}]);
    assert!(found(&optimizer("AdamW", trainer), Symptom::DecayOnNorms).is_empty());
    // No kinds recorded (an older trace), or no decay: nothing to say.
    assert!(found(&clean(6), Symptom::DecayOnNorms).is_empty());
}

#[test]
fn adam_with_weight_decay_is_a_note_and_adamw_or_decoupled_adam_is_not() {
    let decayed = |decoupled: Value| {
        json!([{"tensors": 4, "numel": 1000, "lr": 1e-3, "weight_decay": 0.1,
                "decoupled_weight_decay": decoupled}])
    };
    let f = found(
        &optimizer("Adam", decayed(json!(false))),
        Symptom::AdamL2Decay,
    );
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Info);
    assert_eq!(f[0].get("weight_decay"), Some(0.1));
    assert!(found(
        &optimizer("Adam", decayed(json!(true))),
        Symptom::AdamL2Decay
    )
    .is_empty());
    assert!(found(
        &optimizer("AdamW", decayed(json!(false))),
        Symptom::AdamL2Decay
    )
    .is_empty());
    let none = json!([{"tensors": 4, "numel": 1000, "lr": 1e-3, "weight_decay": 0.0}]);
    assert!(found(&optimizer("Adam", none), Symptom::AdamL2Decay).is_empty());
}
