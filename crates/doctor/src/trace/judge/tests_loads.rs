//! `weights-partly-loaded`: a load that left parameters at their initial values, by what it left, what
//! the checkpoint held instead and whether the program trains what was left.

use super::judge;
use super::test_support::{clean, processes};
use crate::finding::{Finding, Severity, Symptom};
use serde_json::{json, Value};

/// A `load_state_dict` record of a 5313-element module: `missing_numel` elements left at init.
fn load(missing_numel: u64, unexpected: u64) -> Value {
    json!({"kind": "load", "step": 1, "load": 0, "source": "load_state_dict", "class": "Net",
           "where": "train.py:64", "strict": false, "assign": false, "keys": 6,
           "parameters": 5313, "missing": if missing_numel > 0 { 6 } else { 0 },
           "unexpected": unexpected, "mismatched": 0,
           "missing_tensors": if missing_numel > 0 { 6 } else { 0 },
           "missing_numel": missing_numel, "missing_loaded_numel": 0,
           "missing_names": ["body.0.weight", "body.0.bias"], "unexpected_names": [],
           "mismatched_names": [], "unexpected_prefix": null, "unexpected_prefix_matches": 0,
           "missing_prefix": null, "missing_prefix_matches": 0, "renamed": 0,
           "unexpected_mappings": 0, "refills": []})
}

/// A clean run with `records` inserted after its model record.
fn with(records: Vec<Value>) -> Vec<Value> {
    let mut r = clean(6);
    for (i, x) in records.into_iter().enumerate() {
        r.insert(2 + i, x);
    }
    r
}

fn partial(records: &[Value]) -> Vec<Finding> {
    judge(&processes(records))
        .findings
        .into_iter()
        .filter(|f| f.symptom == Symptom::WeightsPartlyLoaded)
        .collect()
}

fn trained(numel: u64) -> Value {
    json!({"kind": "load_trained", "step": 1, "load": 0, "numel": numel, "gone": 0})
}

#[test]
fn a_ddp_prefix_leaves_everything_at_init_and_says_so() {
    let mut l = load(5313, 6);
    l["unexpected_prefix"] = json!("module");
    l["unexpected_prefix_matches"] = json!(6);
    l["renamed"] = json!(6);
    l["unexpected_names"] = json!(["module.body.0.weight"]);
    let f = partial(&with(vec![l, trained(5313)]));
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].severity, Severity::Fail);
    assert!(f[0].summary.contains("100%"), "{}", f[0].summary);
    assert_eq!(f[0].location.as_deref(), Some("train.py:64"));
    let summary = &f[0].summary;
    assert!(summary.contains("`module.` prefix"), "{summary}");
    assert!(summary.contains("DistributedDataParallel"), "{summary}");
    assert!(summary.contains("`module.body.0.weight`"), "{summary}");
    assert!(
        f[0].details.join(" ").contains("`body.0.weight`"),
        "{:?}",
        f[0].details
    );
    assert_eq!(f[0].get("left_at_init_share"), Some(1.0));
}

#[test]
fn a_compiled_checkpoint_and_an_outer_dict_are_named() {
    let mut l = load(5313, 6);
    l["unexpected_prefix"] = json!("_orig_mod");
    l["unexpected_prefix_matches"] = json!(6);
    let f = partial(&with(vec![l]));
    assert!(f[0].summary.contains("torch.compile"), "{f:?}");
    let mut l = load(5313, 3);
    l["unexpected_mappings"] = json!(2);
    let f = partial(&with(vec![l]));
    assert_eq!(f[0].severity, Severity::Fail);
    assert!(f[0].summary.contains("outer dict"), "{f:?}");
}

#[test]
fn a_renamed_head_is_a_warning_even_when_trained() {
    let mut l = load(195, 2);
    l["renamed"] = json!(2);
    l["missing_tensors"] = json!(2);
    let f = partial(&with(vec![l, trained(195)]));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Warn);
    assert!(f[0].summary.contains("renamed"), "{}", f[0].summary);
}

#[test]
fn a_new_head_trained_is_information_and_left_untrained_a_warning() {
    // 195 of 5313 elements missing, nothing unexpected: a new head.
    let f = partial(&with(vec![load(195, 0), trained(195)]));
    assert_eq!(f[0].severity, Severity::Info, "{f:?}");
    let f = partial(&with(vec![load(195, 0)]));
    assert_eq!(f[0].severity, Severity::Warn, "{f:?}");
    assert!(f[0].summary.contains("no optimizer trains them"));
    // A layer replaced after the load (its old tensors gone) is no random layer in use.
    let gone = json!({"kind": "load_trained", "step": 1, "load": 0, "numel": 0, "gone": 195});
    assert_eq!(
        partial(&with(vec![load(195, 0), gone]))[0].severity,
        Severity::Info
    );
    // A hand-written update trains what gets a gradient.
    let mut r = with(vec![load(195, 0)]);
    for x in r.iter_mut().filter(|x| x["kind"] == "optimizer") {
        x["manual"] = json!(true);
    }
    assert_eq!(partial(&r)[0].severity, Severity::Info);
}

#[test]
fn a_later_load_that_fills_what_was_left_clears_it() {
    let mut second = load(0, 0);
    second["load"] = json!(1);
    second["refills"] = json!([{"load": 0, "numel": 195}]);
    assert!(partial(&with(vec![load(195, 0), second])).is_empty());
}

#[test]
fn complete_loads_are_quiet_and_unused_keys_alone_are_information() {
    assert!(partial(&with(vec![load(0, 0)])).is_empty());
    let f = partial(&with(vec![load(0, 2)]));
    assert_eq!(f[0].severity, Severity::Info);
    // Most left at init with nothing unexpected: the checkpoint held little.
    let f = partial(&with(vec![load(4000, 0), trained(4000)]));
    assert_eq!(f[0].severity, Severity::Warn);
    // ... and a call that filled nothing at all.
    let mut l = load(5313, 0);
    l["keys"] = json!(0);
    assert_eq!(partial(&with(vec![l]))[0].severity, Severity::Fail);
}

fn pretrained(missing_numel: u64, base: u64, mismatched_base: u64) -> Value {
    json!({"kind": "load", "step": 1, "load": 0, "source": "from_pretrained",
           "class": "BertForSequenceClassification", "where": "train.py:45", "strict": null,
           "parameters": 20163, "missing": 4, "unexpected": 5,
           "mismatched": if mismatched_base > 0 { 1 } else { 0 }, "missing_tensors": 4,
           "missing_numel": missing_numel, "missing_loaded_numel": 0,
           "missing_base_numel": base, "mismatched_numel": mismatched_base,
           "mismatched_base_numel": mismatched_base,
           "missing_names": ["bert.pooler.dense.weight", "classifier.weight"],
           "unexpected_names": ["cls.predictions.bias"], "mismatched_names": [],
           "renamed": 0, "refills": [], "ignore_mismatched_sizes": mismatched_base > 0})
}

#[test]
fn from_pretrained_a_new_head_fine_tuned_is_normal() {
    // A masked-LM checkpoint into a sequence classifier: new pooler and classifier, trained.
    let f = partial(&with(vec![pretrained(1155, 1056, 0), trained(1155)]));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Info, "{f:?}");
    // The same head never trained (an evaluation of a random head).
    assert_eq!(
        partial(&with(vec![pretrained(1155, 1056, 0)]))[0].severity,
        Severity::Warn
    );
    // Most of the model newly initialised: the checkpoint does not fit.
    let f = partial(&with(vec![pretrained(15000, 14000, 0), trained(15000)]));
    assert_eq!(f[0].severity, Severity::Fail);
}

#[test]
fn from_pretrained_body_layers_reinitialised_for_their_shape_warn() {
    let f = partial(&with(vec![pretrained(2435, 1056, 1280), trained(2435)]));
    assert_eq!(f[0].severity, Severity::Warn, "{f:?}");
    assert!(
        f[0].summary.contains("ignore_mismatched_sizes"),
        "{}",
        f[0].summary
    );
}

#[test]
fn names_from_the_trace_are_escaped() {
    let mut l = load(5313, 6);
    l["missing_names"] = json!(["a\nb\u{1b}[31m"]);
    let f = partial(&with(vec![l]));
    let details = f[0].details.join(" ");
    assert!(
        !details.contains('\n') && !details.contains('\u{1b}'),
        "{details}"
    );
}
