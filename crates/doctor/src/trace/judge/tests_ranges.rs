//! `ids-out-of-range`: an embedding fed an id past its rows, a class target outside [0, C);
//! the cause told apart by what the record measured.

use super::judge;
use super::test_support::{clean, processes};
use crate::finding::{Finding, Severity, Symptom};
use serde_json::{json, Value};

fn found(records: &[Value]) -> Vec<Finding> {
    judge(&processes(records))
        .findings
        .into_iter()
        .filter(|f| f.symptom == Symptom::IdsOutOfRange)
        .collect()
}

/// A run that raised at step 1, with `record` before its end.
fn crashed(record: Value) -> Vec<Value> {
    let mut r = clean(0);
    r.pop();
    r.push(record);
    r.push(json!({"kind": "end", "reason": "exception", "steps": 0,
                  "exception": "IndexError: index out of range in self"}));
    r
}

fn embedding(tokenizer_length: Value, min: i64, max: i64) -> Value {
    json!({"kind": "out_of_range", "step": 1, "check": "embedding", "fn": "embedding",
           "when": "before", "module": "transformer.wte", "class": "Embedding",
           "weight": "transformer.wte.weight", "model": 0, "rows": 50257, "classes": null,
           "min": min, "max": max, "out_of_range": 4, "positions": 512, "ignore_index": null,
           "padding_idx": null, "consecutive": false, "dtype": "int64", "device": "cuda:0",
           "vocab_size": 50257,
           "tokenizer_length": tokenizer_length, "grad_enabled": true,
           "where": "train.py:93", "frames": ["train.py:120", "train.py:93"]})
}

fn target(classes: u64, min: i64, max: i64) -> Value {
    json!({"kind": "out_of_range", "step": 37, "check": "target", "fn": "cross_entropy",
           "when": "raised", "module": null, "class": null, "weight": null, "model": null,
           "rows": null, "classes": classes, "min": min, "max": max, "out_of_range": 3,
           "positions": 32, "ignore_index": -100, "padding_idx": null, "dtype": "int64",
           "device": "cpu", "vocab_size": null, "tokenizer_length": null,
           "grad_enabled": true, "where": "train.py:71", "frames": ["train.py:71"]})
}

#[test]
fn a_clean_run_has_none() {
    assert!(found(&clean(12)).is_empty());
}

#[test]
fn tokens_added_without_resizing_name_the_module_the_id_and_the_tokenizer() {
    let f = found(&crashed(embedding(json!(50260), 50257, 50259)));
    assert_eq!(f.len(), 1, "{f:?}");
    let f = &f[0];
    assert_eq!(f.severity, Severity::Fail);
    assert_eq!(f.metric, "embedding transformer.wte");
    assert_eq!(f.location.as_deref(), Some("train.py:93"));
    for part in [
        "token id 50259 fed to `transformer.wte`, which has 50257 rows (4 position(s) of 512)",
        "the tokenizer has 50260 tokens",
        "resize_token_embeddings(len(tokenizer))",
    ] {
        assert!(f.summary.contains(part), "{part}: {}", f.summary);
    }
    assert_eq!(f.get("rows"), Some(50257.0));
    assert_eq!(f.get("max"), Some(50259.0));
    assert!(f.ruled_out.iter().any(|r| r == "labels counted from 1"));
}

#[test]
fn without_a_tokenizer_the_causes_are_listed_and_a_negative_id_is_named() {
    let f = &found(&crashed(embedding(Value::Null, 50257, 50300)))[0];
    assert!(f.summary.contains("token id 50300"), "{}", f.summary);
    assert!(f.summary.contains("tokens added without"), "{}", f.summary);
    let f = &found(&crashed(embedding(Value::Null, -100, -100)))[0];
    assert!(f.summary.contains("token id -100"), "{}", f.summary);
    assert!(f.summary.contains("negative id"), "{}", f.summary);
}

#[test]
fn a_target_equal_to_the_class_count_reads_as_labels_counted_from_one() {
    let f = found(&crashed(target(10, 10, 10)));
    assert_eq!(f.len(), 1);
    let f = &f[0];
    assert_eq!(
        (f.severity, f.metric.as_str()),
        (Severity::Fail, "target cross_entropy")
    );
    assert!(
        f.summary
            .starts_with("target 10 for a cross_entropy over 10 classes (3 position(s) of 32"),
        "{}",
        f.summary
    );
    assert!(f.summary.contains("labels counted from 1"), "{}", f.summary);
    // The PLAYBOOK row's tokenizer hypotheses are left out of a target's finding.
    assert!(f
        .ruled_out
        .iter()
        .any(|r| r == "tokens added to the tokenizer"));
    // Past C by more: a head too small.
    let f = &found(&crashed(target(10, 12, 14)))[0];
    assert!(f.summary.contains("target 14"), "{}", f.summary);
    assert!(f.summary.contains("fewer outputs"), "{}", f.summary);
}

#[test]
fn a_negative_target_that_is_not_the_ignore_index_names_both() {
    let f = &found(&crashed(target(5, -1, -1)))[0];
    assert!(f.summary.contains("target -1"), "{}", f.summary);
    assert!(
        f.summary.contains("marked -1 while the loss ignores -100"),
        "{}",
        f.summary
    );
}

#[test]
fn ids_that_count_up_by_one_are_positions_past_the_position_table() {
    let mut r = embedding(Value::Null, 1024, 1029);
    r["module"] = json!("transformer.wpe");
    r["rows"] = json!(1024);
    r["consecutive"] = json!(true);
    let f = &found(&crashed(r))[0];
    assert!(
        f.summary
            .starts_with("position id 1029 fed to `transformer.wpe`, which has 1024 rows"),
        "{}",
        f.summary
    );
    assert!(
        f.summary.contains("max_position_embeddings"),
        "{}",
        f.summary
    );
}
