//! Labels whatever the layout: time-major batches shifted twice or not at all, a token id
//! ignored wherever it occurs (pad = eos, pad = the space) beside prompt spans and padding that
//! are ignored rightly, and rows with no supervised position.

use super::judge;
use super::test_support::{clean, processes};
use crate::finding::{Severity, Symptom};
use serde_json::{json, Value};

fn symptoms(records: &[Value]) -> Vec<(Symptom, Severity)> {
    judge(&processes(records))
        .findings
        .iter()
        .map(|f| (f.symptom, f.severity))
        .collect()
}

/// A clean run with one `labels` record per early step, each `edit`ed.
fn with_labels(edit: impl Fn(&mut Value)) -> Vec<Value> {
    let mut r = clean(5);
    for step in 1..=3 {
        let mut l = json!({"kind": "labels", "step": step, "model": 0, "shifts_labels": false,
            "grad_enabled": true, "source": "loss", "layout": "batch_major",
            "positions": 480, "ignored": 32, "equal_inputs": 0.03, "next_inputs": 1.0,
            "two_inputs": 0.04, "pad_token_id": null, "eos_token_id": null,
            "pad_from": "attention_mask", "pad_positions": 32, "pad_labelled": 0,
            "rows": 16, "rows_unsupervised": 0, "attended_targets": 480,
            "supervised_targets": 480, "never_supervised": []});
        edit(&mut l);
        r.insert(3 + step as usize, l);
    }
    r
}

#[test]
fn time_major_targets_two_ahead_are_shifted_twice_and_one_ahead_is_clean() {
    let tm = |equal: f64, next: f64, two: f64| {
        with_labels(move |l| {
            l["layout"] = json!("time_major");
            l["equal_inputs"] = json!(equal);
            l["next_inputs"] = json!(next);
            l["two_inputs"] = json!(two);
        })
    };
    assert_eq!(symptoms(&tm(0.03, 1.0, 0.04)), []);
    let r = tm(0.02, 0.05, 1.0);
    assert!(symptoms(&r).contains(&(Symptom::LabelsShiftedTwice, Severity::Fail)));
    let f = judge(&processes(&r)).findings;
    let f = f
        .iter()
        .find(|f| f.symptom == Symptom::LabelsShiftedTwice)
        .unwrap();
    assert!(f.summary.contains("time-major (T, B)"), "{}", f.summary);
    assert!(symptoms(&tm(1.0, 0.05, 0.04)).contains(&(Symptom::LabelsNotShifted, Severity::Fail)));
    // A model that shifts itself, given labels two ahead of nothing: not the loss's targets.
    let r = with_labels(|l| {
        l["source"] = json!("kwargs");
        l["shifts_labels"] = json!(true);
        l["equal_inputs"] = json!(1.0);
        l["next_inputs"] = json!(0.02);
    });
    assert_eq!(symptoms(&r), []);
}

fn never(token: i64, positions: u64, isolated: u64) -> Value {
    json!([{"token": token, "positions": positions, "isolated": isolated}])
}

#[test]
fn a_token_ignored_wherever_it_occurs_is_caught_with_its_share_and_role() {
    // pad = eos: one EOS per row, attended, ignored, its neighbours supervised.
    let r = with_labels(|l| {
        l["source"] = json!("kwargs");
        l["shifts_labels"] = json!(true);
        l["equal_inputs"] = json!(1.0);
        l["next_inputs"] = json!(0.02);
        l["pad_token_id"] = json!(50256);
        l["eos_token_id"] = json!(50256);
        l["supervised_targets"] = json!(464);
        l["never_supervised"] = never(50256, 16, 16);
    });
    let f = judge(&processes(&r)).findings;
    let f = f
        .iter()
        .find(|f| f.symptom == Symptom::TokenNeverSupervised)
        .expect("token-never-supervised");
    assert_eq!(f.severity, Severity::Warn);
    assert!(f.summary.contains("token id 50256"), "{}", f.summary);
    assert!(f.summary.contains("never learns to stop"), "{}", f.summary);
    let n = |k: &str| f.numbers.iter().find(|(n, _)| *n == k).unwrap().1;
    assert_eq!(
        (n("positions"), n("is_pad_token"), n("is_eos_token")),
        (48.0, 1.0, 1.0)
    );
    assert!((n("share_of_attended") - 48.0 / 1440.0).abs() < 1e-9);

    // pad = the space: 18% of the targets, without a config.
    let r = with_labels(|l| l["never_supervised"] = never(3, 86, 80));
    assert!(symptoms(&r).contains(&(Symptom::TokenNeverSupervised, Severity::Warn)));
}

#[test]
fn spans_rare_tokens_and_padding_are_not_a_token_never_supervised() {
    // A prompt-masking collator: the prompt's tokens are ignored in spans (neighbours ignored).
    let r = with_labels(|l| l["never_supervised"] = never(7, 40, 2));
    assert_eq!(symptoms(&r), []);
    // A token seen a few times, all ignored: too little to tell.
    let r = with_labels(|l| l["never_supervised"] = never(7, 2, 2));
    assert_eq!(symptoms(&r), []);
    // Listed on one early batch of three only: not a rule of the collator.
    let mut r = with_labels(|_| {});
    r[4]["never_supervised"] = never(7, 30, 30);
    assert_eq!(symptoms(&r), []);
    // Nothing supervised at all is labels-all-ignored's, not a token's.
    let r = with_labels(|l| {
        l["supervised_targets"] = json!(0);
        l["never_supervised"] = never(7, 40, 40);
    });
    assert_eq!(symptoms(&r), []);
    // Evaluation forwards do not count.
    let r = with_labels(|l| {
        l["grad_enabled"] = json!(false);
        l["never_supervised"] = never(7, 40, 40);
    });
    assert_eq!(symptoms(&r), []);
}

#[test]
fn rows_with_nothing_supervised_warn_from_a_quarter() {
    // 67% of the rows cut away (the planted truncation case).
    let r = with_labels(|l| l["rows_unsupervised"] = json!(11));
    let f = judge(&processes(&r)).findings;
    let f = f
        .iter()
        .find(|f| f.symptom == Symptom::RowsUnsupervised)
        .expect("rows-unsupervised");
    assert_eq!(f.severity, Severity::Warn);
    assert!(f.summary.starts_with("33 of the 48 rows"), "{}", f.summary);
    assert!(
        symptoms(&with_labels(|l| l["rows_unsupervised"] = json!(4)))
            .contains(&(Symptom::RowsUnsupervised, Severity::Warn))
    );
    // A length tail: 1 row in 16.
    assert_eq!(
        symptoms(&with_labels(|l| l["rows_unsupervised"] = json!(1))),
        []
    );
    // Every row: the whole batch, labels-all-ignored's.
    assert_eq!(
        symptoms(&with_labels(|l| l["rows_unsupervised"] = json!(16))),
        []
    );
    // Masked-LM labels (not the inputs at any offset): short rows with no masked position are
    // the objective's chance, not a cut.
    let r = with_labels(|l| {
        l["equal_inputs"] = json!(0.12);
        l["next_inputs"] = json!(0.02);
        l["rows_unsupervised"] = json!(6);
    });
    assert_eq!(symptoms(&r), []);
    // Too few rows to tell.
    let r = with_labels(|l| {
        l["rows"] = json!(2);
        l["rows_unsupervised"] = json!(1);
    });
    assert_eq!(symptoms(&r), []);
}
