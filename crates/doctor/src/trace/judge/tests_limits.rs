//! `op-at-limit` (an op in a heavy step's loss graph at the edge of its domain while the loss
//! was finite) and the op named in the `nonfinite` finding from the graph of the first loss
//! that was not finite.

use super::test_support::{clean, of};
use crate::finding::{Severity, Symptom};
use serde_json::{json, Value};

fn op(name: &str, elements: u64, singular: u64, subnormal: u64, min: Option<f64>) -> Value {
    json!({"op": name, "grad_fn": "X", "input": null, "dtype": "float32",
           "elements": elements, "singular": singular, "subnormal": subnormal,
           "min": min, "exponent": null, "depth": 2})
}

fn with(walks: &[Value]) -> Vec<Value> {
    let mut r = clean(30);
    let end = r.pop().unwrap();
    r.extend(walks.iter().cloned());
    r.push(end);
    r
}

fn walk(step: u64, when: &str, loss_finite: bool, ops: Vec<Value>) -> Value {
    json!({"kind": "saturation", "step": step, "when": when, "loss_finite": loss_finite,
           "nodes": 40, "truncated": false, "ops": ops})
}

#[test]
fn a_masked_log_of_zero_on_a_heavy_step_is_a_warning_naming_the_op_and_the_share() {
    let r = with(&[walk(
        1,
        "heavy",
        true,
        vec![op("log", 4096, 12, 0, Some(0.0))],
    )]);
    let f = of(&r, Symptom::OpAtLimit);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].severity, Severity::Warn);
    assert_eq!(f[0].step, 1.0);
    assert_eq!(f[0].get("inputs_at_limit"), Some(12.0));
    assert_eq!(f[0].get("inputs"), Some(4096.0));
    assert!(
        f[0].summary
            .contains("`log` of a value <= 0 in 12 of 4,096 inputs"),
        "{}",
        f[0].summary
    );
    let details = f[0].details.join("\n");
    assert!(details.contains("0 x inf is NaN"), "{details}");
    assert!(details.contains("log_softmax"), "{details}");
}

#[test]
fn subnormal_inputs_are_named_as_the_step_before_with_the_smallest() {
    let r = with(&[walk(
        2,
        "heavy",
        true,
        vec![op("log", 64, 0, 3, Some(5.5e-42))],
    )]);
    let f = of(&r, Symptom::OpAtLimit);
    assert_eq!(f.len(), 1);
    assert!(
        f[0].summary.contains(
            "below float32's smallest normal number in 3 of 64 inputs, smallest 5.500e-42"
        ),
        "{}",
        f[0].summary
    );
    assert!(!f[0].details.join(" ").contains("0 x inf"));
}

#[test]
fn a_division_by_a_number_names_its_denominator() {
    let mut o = op("div", 1, 1, 0, Some(0.0));
    o["input"] = json!("scalar");
    let r = with(&[walk(117, "loss", false, vec![o])]);
    // a NaN loss: the nonfinite finding names the op; no op-at-limit warning (not a heavy step)
    let mut r2 = r.clone();
    r2.insert(
        r2.len() - 1,
        json!({"kind": "nonfinite", "step": 117, "phase": "loss", "value": "NaN",
               "frames": ["train.py:48"]}),
    );
    assert!(of(&r2, Symptom::OpAtLimit).is_empty());
    let f = of(&r2, Symptom::Nonfinite);
    assert_eq!(f.len(), 1);
    assert!(
        f[0].summary.contains(
            "in the graph of step 117's loss, a division by 0 in its denominator (a single number)"
        ),
        "{}",
        f[0].summary
    );
    assert!(f[0].details.iter().any(|d| d.contains("clamp_min")));
    // without a nonfinite record the walk alone says nothing
    assert!(of(&r, Symptom::Nonfinite).is_empty());
}

#[test]
fn nothing_at_the_limit_or_an_empty_walk_is_quiet() {
    let r = with(&[
        walk(1, "heavy", true, vec![]),
        walk(9, "loss", false, vec![]),
    ]);
    assert!(of(&r, Symptom::OpAtLimit).is_empty());
    let mut r2 = r.clone();
    r2.insert(
        r2.len() - 1,
        json!({"kind": "nonfinite", "step": 9, "phase": "loss", "value": "NaN", "frames": []}),
    );
    let f = of(&r2, Symptom::Nonfinite);
    assert!(!f[0].summary.contains("graph"), "{}", f[0].summary);
    assert!(of(&clean(30), Symptom::OpAtLimit).is_empty());
}

#[test]
fn every_op_has_words_and_a_fix() {
    for name in [
        "log",
        "log2",
        "log10",
        "log1p",
        "div",
        "reciprocal",
        "rsqrt",
        "exp",
        "sqrt",
        "acos",
        "asin",
        "pow",
    ] {
        let r = with(&[walk(1, "heavy", true, vec![op(name, 10, 2, 0, Some(0.0))])]);
        let f = of(&r, Symptom::OpAtLimit);
        assert_eq!(f.len(), 1, "{name}");
        assert!(f[0].summary.contains("2 of 10"), "{name}: {}", f[0].summary);
        assert!(
            f[0].details.last().unwrap().starts_with("fix: "),
            "{name}: {:?}",
            f[0].details
        );
    }
}

#[test]
fn the_first_module_says_whether_its_weights_or_its_input_were_already_not_finite() {
    let summary = |params: bool, inputs: bool| {
        let mut r = clean(30);
        r.insert(
            r.len() - 1,
            json!({"kind": "nonfinite", "step": 5, "phase": "forward", "module": "net.0",
                   "class": "Linear", "frames": [], "inputs_finite": inputs,
                   "parameters_finite": params}),
        );
        of(&r, Symptom::Nonfinite)[0].summary.clone()
    };
    assert!(summary(false, true).contains("own weights were already not finite"));
    assert!(summary(true, false).contains("input was already not finite"));
    assert!(summary(true, true).contains("from finite inputs and weights"));
}
