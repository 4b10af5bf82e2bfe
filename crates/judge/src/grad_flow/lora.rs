//! grad-flow on a LoRA model: the adapters must be exactly what trains, and targets that match
//! no module fail whatever else the measurement says.

use super::{list, plural, Grad, Measurement, ParamRow, ID};
use mldebug_report::{Finding, Status};
use serde::{Deserialize, Serialize};

/// A LoRA-wrapped model: which modules the adapters landed on.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Lora {
    /// The target module names asked for.
    pub targets: Vec<String>,
    /// The modules that got adapters.
    #[serde(default)]
    pub matched_modules: Vec<String>,
    /// The adapters' trainable parameters.
    #[serde(default)]
    pub adapter_params: Vec<String>,
    /// Why wrapping failed (peft's message), if it did.
    #[serde(default)]
    pub error: Option<String>,
    /// Names of the model's linear layers, for a hint when no target matched.
    #[serde(default)]
    pub linear_modules: Vec<String>,
}

/// A LoRA adapter's down-projection: its gradient is exactly zero at init because the paired
/// up-projection starts at zero (peft's default), so a zero there is expected.
pub(super) fn lora_a_at_init(m: &Measurement, row: &ParamRow) -> bool {
    m.lora.is_some() && row.name.contains("lora_A") && row.grad == Grad::Zero
}

/// A LoRA model whose adapters landed nowhere: nothing trains, whatever the rest says.
pub(super) fn lora_problem(m: &Measurement) -> Option<Finding> {
    let l = m.lora.as_ref()?;
    if l.error.is_none() && !l.matched_modules.is_empty() && !l.adapter_params.is_empty() {
        return None;
    }
    let why = l
        .error
        .as_deref()
        .and_then(|e| e.lines().next())
        .map(|e| format!(" (peft: {e})"))
        .unwrap_or_default();
    let names = if l.linear_modules.is_empty() {
        String::new()
    } else {
        format!(
            "; the model's linear layers are named {}",
            l.linear_modules.join(", ")
        )
    };
    let mut f = Finding::new(
        ID,
        Status::Fail,
        format!(
            "the LoRA targets {} match no module, so no adapter trains{why}{names}",
            l.targets.join(", ")
        ),
    )
    .metric("lora_adapters", 0.0)
    .metric("params", m.params.len() as f64);
    f.details = l
        .error
        .iter()
        .flat_map(|e| e.lines())
        .map(str::to_string)
        .collect();
    Some(f)
}

/// With LoRA, the adapters must be the trainable parameters: base weights trained beside them
/// warn (they cost the memory LoRA is meant to save), unless something worse was found.
pub(super) fn lora_note(m: &Measurement, status: Status, summary: String) -> (Status, String) {
    let Some(l) = &m.lora else {
        return (status, summary);
    };
    let extra: Vec<&str> = m
        .params
        .iter()
        .map(|r| r.name.as_str())
        .filter(|n| !l.adapter_params.iter().any(|a| a == n))
        .collect();
    let adapters = format!(
        "{} LoRA adapter tensor{} on {} module{}",
        l.adapter_params.len(),
        plural(l.adapter_params.len()),
        l.matched_modules.len(),
        plural(l.matched_modules.len())
    );
    match status {
        Status::Pass if !extra.is_empty() => (
            Status::Warn,
            format!(
                "{summary}; but {} base parameter{} train beside the {adapters}: {}",
                extra.len(),
                plural(extra.len()),
                list(&extra)
            ),
        ),
        Status::Pass => (
            status,
            format!("{summary}; exactly the {adapters} train, the base weights are frozen"),
        ),
        _ => (status, summary),
    }
}
