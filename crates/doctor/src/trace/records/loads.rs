//! The records of weights loads: `load` and `load_trained` (`torch/run/TRACE.md` says what
//! each field means).

use serde::Deserialize;

/// `load`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Load {
    pub step: u64,
    pub load: u32,
    /// `load_state_dict` or `from_pretrained`.
    pub source: String,
    pub class: Option<String>,
    #[serde(rename = "where")]
    pub location: Option<String>,
    pub strict: Option<bool>,
    pub assign: Option<bool>,
    pub keys: Option<u64>,
    pub parameters: u64,
    pub missing: u64,
    pub unexpected: u64,
    pub mismatched: u64,
    pub missing_tensors: u64,
    pub missing_numel: u64,
    pub missing_loaded_numel: u64,
    pub missing_base_numel: Option<u64>,
    pub mismatched_numel: u64,
    pub mismatched_base_numel: Option<u64>,
    pub missing_names: Vec<String>,
    pub unexpected_names: Vec<String>,
    pub mismatched_names: Vec<String>,
    pub unexpected_prefix: Option<String>,
    pub unexpected_prefix_matches: u64,
    pub missing_prefix: Option<String>,
    pub missing_prefix_matches: u64,
    pub renamed: u64,
    pub unexpected_mappings: u64,
    pub refills: Vec<Refill>,
    pub ignore_mismatched_sizes: Option<bool>,
}

/// One entry of `load.refills`: elements an earlier load left at init that this one filled.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Refill {
    pub load: u32,
    pub numel: u64,
}

/// `load_trained`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct LoadTrained {
    pub step: u64,
    pub load: u32,
    pub numel: u64,
    pub gone: u64,
}
