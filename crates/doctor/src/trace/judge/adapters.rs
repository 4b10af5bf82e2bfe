//! `adapter-not-applied`: the program built a peft adapter config (a `LoraConfig`, ...), but
//! the model it trains holds no adapter module at its first step: the config was never applied
//! to it (`get_peft_model`'s result discarded, or applied to a copy), so the whole model trains
//! where adapters were meant to.

use super::{main_model, pct};
use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;
use crate::trace::records::{AdapterConfig, Adapters};

pub(super) fn judge(p: &Process, out: &mut Vec<Finding>) {
    // Each record: an optimizer's first step after configs were built. The first that trains a
    // model without adapters is the finding.
    for record in p.adapters.iter().filter(|a| !a.configs.is_empty()) {
        if judge_record(p, record, out) {
            return;
        }
    }
}

/// The model an adapters record is about: the one the optimizer that stepped holds tensors of,
/// or (a record without `stepped`) the main model.
fn judge_record(p: &Process, record: &Adapters, out: &mut Vec<Finding>) -> bool {
    let stepped = record.models.iter().find(|m| m.stepped == Some(true));
    let Some(model) = stepped
        .and_then(|s| p.models.iter().find(|m| m.model == s.model))
        .or_else(|| main_model(p))
    else {
        return false;
    };
    // A peft model is the config applied, whatever its adapter holds (a prompt-tuning config
    // adds a prompt encoder, no tuner layer).
    if model
        .module
        .as_deref()
        .is_some_and(|m| m.starts_with("peft"))
        || model.class.starts_with("Peft")
    {
        return false;
    }
    let Some(held) = record.models.iter().find(|m| m.model == model.model) else {
        return false;
    };
    if held.adapter_modules > 0 || held.trainable == 0 || held.parameters == 0 {
        return false;
    }
    let config = &record.configs[0];
    let share = held.trainable as f64 / held.parameters as f64;
    let site = config
        .location
        .as_deref()
        .map(|w| format!(" at {w}"))
        .unwrap_or_default();
    out.push(
        Finding::new(
            Symptom::AdapterNotApplied,
            Severity::Warn,
            "parameters",
            record.step as f64,
        )
        .summary(format!(
            "a {}{site} was built, but the model trained ({}) holds no adapter module and {} of \
             its {} parameters train: the config was never applied to this model \
             (`get_peft_model(model, config)` returns the model to train; its result was not \
             the model trained, or it wrapped a copy), so the whole model trains where adapters \
             were meant to",
            describe(config),
            model.class,
            pct(share),
            held.parameters
        ))
        .number("trainable_share", share)
        .number("trainable", held.trainable as f64)
        .number("parameters", held.parameters as f64)
        .number("configs_built", record.configs_built as f64)
        .details(record.configs.iter().skip(1).map(describe))
        .at(config.location.clone()),
    );
    true
}

/// `LoraConfig (r=8, target_modules q_proj, v_proj)`.
fn describe(c: &AdapterConfig) -> String {
    let mut parts = Vec::new();
    if let Some(r) = c.r {
        parts.push(format!("r={r}"));
    }
    match &c.target_modules {
        Some(serde_json::Value::String(s)) => parts.push(format!("target_modules {s}")),
        Some(serde_json::Value::Array(a)) => {
            let names: Vec<&str> = a.iter().filter_map(|v| v.as_str()).collect();
            parts.push(format!("target_modules {}", names.join(", ")));
        }
        _ => {}
    }
    if parts.is_empty() {
        c.class.clone()
    } else {
        format!("{} ({})", c.class, parts.join(", "))
    }
}
