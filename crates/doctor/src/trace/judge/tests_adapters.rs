//! `adapter-not-applied`: a peft config built, the model trained holds no adapter module.

use super::judge;
use super::test_support::clean;
use crate::finding::{Finding, Severity, Symptom};
use serde_json::{json, Value};

fn of(records: &[Value]) -> Vec<Finding> {
    judge(&super::test_support::processes(records))
        .findings
        .into_iter()
        .filter(|f| f.symptom == Symptom::AdapterNotApplied)
        .collect()
}

/// A clean run with an `adapters` record: a LoraConfig built, the model holding `modules`
/// adapter modules and training `trainable` of its 1000 parameters.
fn with_config(modules: u64, trainable: u64) -> Vec<Value> {
    let mut r = clean(6);
    let at = r.iter().position(|x| x["kind"] == "step").unwrap() + 1;
    r.insert(
        at,
        json!({"kind": "adapters", "step": 1, "configs_built": 1,
               "configs": [{"class": "LoraConfig", "peft_type": "LORA", "r": 8,
                            "target_modules": ["q_proj", "v_proj"], "where": "train.py:33"}],
               "models": [{"model": 0, "adapter_modules": modules, "parameters": 1000,
                           "trainable": trainable}]}),
    );
    r
}

#[test]
fn a_config_never_applied_is_a_warning_naming_it() {
    let f = of(&with_config(0, 1000));
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].severity, Severity::Warn);
    assert_eq!(f[0].location.as_deref(), Some("train.py:33"));
    assert!(
        f[0].summary
            .contains("a LoraConfig (r=8, target_modules q_proj, v_proj) at train.py:33")
            && f[0].summary.contains("100% of its 1000 parameters train"),
        "{}",
        f[0].summary
    );
}

#[test]
fn a_model_with_adapters_or_without_a_config_is_quiet() {
    assert!(of(&with_config(4, 20)).is_empty());
    // A prompt-tuning config applied: a peft model without tuner layers.
    let mut prompt = with_config(0, 20);
    for m in prompt.iter_mut().filter(|x| x["kind"] == "model") {
        m["class"] = json!("PeftModelForCausalLM");
        m["module"] = json!("peft.peft_model");
    }
    assert!(of(&prompt).is_empty());
    assert!(of(&clean(6)).is_empty());
}

/// A base pretrained first (model 0, optimizer 0), the config built afterwards, and a second
/// model trained by a second optimizer: the record its first step wrote is judged on the model
/// that optimizer holds.
fn config_after_pretraining(second_has_adapters: bool) -> Vec<Value> {
    let mut r = clean(6);
    let at = r.iter().position(|x| x["kind"] == "end").unwrap();
    let mut second = r.iter().find(|x| x["kind"] == "model").cloned().unwrap();
    second["model"] = json!(1);
    let modules = if second_has_adapters { 4 } else { 0 };
    let trainable = if second_has_adapters { 20 } else { 1000 };
    r.insert(at, second);
    r.insert(
        at + 1,
        json!({"kind": "adapters", "step": 1, "optimizer": 1, "configs_built": 1,
               "configs": [{"class": "LoraConfig", "peft_type": "LORA", "r": 4,
                            "target_modules": ["c_attn"], "where": "train.py:64"}],
               "models": [{"model": 0, "adapter_modules": 0, "parameters": 1000,
                           "trainable": 1000, "stepped": false},
                          {"model": 1, "adapter_modules": modules, "parameters": 1000,
                           "trainable": trainable, "stepped": true}]}),
    );
    r
}

#[test]
fn a_config_built_after_pretraining_is_judged_on_the_model_trained_next() {
    let f = of(&config_after_pretraining(false));
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].location.as_deref(), Some("train.py:64"));
    assert!(of(&config_after_pretraining(true)).is_empty());
}
