//! Where `train-in-eval-mode` points: the training forward the probes saw in eval mode, not the
//! model's first forward (often an evaluation under no_grad before training).

use super::judge;
use super::test_support::{clean, processes, set};
use crate::finding::Symptom;
use serde_json::json;

#[test]
fn train_in_eval_mode_points_at_the_training_forward() {
    let mut r = clean(5);
    set(&mut r, "step", |_| true, "training", json!(false));
    // The model's first forward was an evaluation (its `where`); the training forward in eval
    // mode is recorded by the probes as a mode event.
    set(&mut r, "model", |_| true, "where", json!("train.py:12"));
    r.insert(
        5,
        json!({"kind": "mode", "step": 1, "event": "train_step_in_eval", "module": "",
               "class": "Net", "where": "train.py:88"}),
    );
    let found = judge(&processes(&r))
        .findings
        .into_iter()
        .find(|f| f.symptom == Symptom::TrainInEvalMode)
        .expect("train-in-eval-mode");
    assert_eq!(found.location.as_deref(), Some("train.py:88"));
    // Without the event (an older trace), the model's own place is all there is.
    let mut r = clean(5);
    set(&mut r, "step", |_| true, "training", json!(false));
    let found = judge(&processes(&r))
        .findings
        .into_iter()
        .find(|f| f.symptom == Symptom::TrainInEvalMode)
        .unwrap();
    assert_eq!(found.location.as_deref(), Some("train.py:40"));
}
