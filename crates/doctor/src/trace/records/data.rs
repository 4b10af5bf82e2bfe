//! The records of what the program fed its model and its losses, and of its data loaders:
//! `loss_call`, `labels`, `out_of_range`, `mode`, `nonfinite`, `saturation`, `loader`, `epoch`, `overlap`,
//! `batchnorm` (`torch/run/TRACE.md` says what each field means).

use super::num;
use serde::Deserialize;
use std::collections::BTreeMap;

/// `loss_call`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct LossCall {
    pub step: u64,
    #[serde(rename = "fn")]
    pub function: String,
    #[serde(rename = "where")]
    pub location: Option<String>,
    pub classes: Option<u64>,
    pub targets: u64,
    pub ignored: u64,
    pub ignore_index: Option<i64>,
    pub probabilities: bool,
    pub log_probabilities: bool,
    #[serde(deserialize_with = "num")]
    pub value: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub per_target: Option<f64>,
    pub reduction: Option<String>,
    #[serde(deserialize_with = "num")]
    pub label_smoothing: Option<f64>,
    pub grad_enabled: Option<bool>,
}

/// `labels`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Labels {
    pub step: u64,
    pub model: u32,
    pub shifts_labels: bool,
    pub source: Option<String>,
    pub positions: u64,
    pub ignored: u64,
    #[serde(deserialize_with = "num")]
    pub equal_inputs: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub next_inputs: Option<f64>,
    pub pad_token_id: Option<i64>,
    pub pad_positions: u64,
    pub pad_labelled: u64,
    pub grad_enabled: Option<bool>,
    pub pad_from: Option<String>,
    /// `batch_major` (B, T) or `time_major` (T, B).
    pub layout: Option<String>,
    #[serde(deserialize_with = "num")]
    pub two_inputs: Option<f64>,
    pub eos_token_id: Option<i64>,
    pub rows: u64,
    pub rows_unsupervised: u64,
    pub attended_targets: Option<u64>,
    pub supervised_targets: Option<u64>,
    pub never_supervised: Option<Vec<NeverSupervised>>,
}

/// A token id of `labels.never_supervised`: attended as a target, ignored wherever it occurs.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct NeverSupervised {
    pub token: i64,
    pub positions: u64,
    pub isolated: u64,
}

/// `out_of_range`: the ids of an embedding lookup past its rows (or negative), or the integer
/// targets of a `cross_entropy` / `nll_loss` outside [0, classes) and not its `ignore_index`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct OutOfRange {
    pub step: u64,
    /// `embedding` or `target`.
    pub check: String,
    #[serde(rename = "fn")]
    pub function: String,
    /// `before` (read before the kernel, on a heavy step) or `raised` (the call raised).
    pub when: Option<String>,
    pub module: Option<String>,
    pub class: Option<String>,
    pub weight: Option<String>,
    pub model: Option<u32>,
    pub rows: Option<u64>,
    pub classes: Option<u64>,
    /// The smallest and largest offending value.
    pub min: i64,
    pub max: i64,
    pub out_of_range: u64,
    pub positions: u64,
    pub ignore_index: Option<i64>,
    pub padding_idx: Option<i64>,
    /// Every row of the ids counts up by one (position ids, `arange`).
    pub consecutive: bool,
    pub dtype: Option<String>,
    pub device: Option<String>,
    pub vocab_size: Option<u64>,
    pub tokenizer_length: Option<u64>,
    pub grad_enabled: Option<bool>,
    #[serde(rename = "where")]
    pub location: Option<String>,
    pub frames: Vec<String>,
}

/// `mode`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Mode {
    pub step: u64,
    pub event: String,
    pub module: Option<String>,
    pub class: Option<String>,
    #[serde(rename = "where")]
    pub location: Option<String>,
}

/// `nonfinite`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Nonfinite {
    pub step: u64,
    pub phase: String,
    pub module: Option<String>,
    pub class: Option<String>,
    pub frames: Vec<String>,
    /// The loss's value (`phase: "loss"`).
    #[serde(deserialize_with = "num")]
    pub value: Option<f64>,
    /// When a parameter was found (`phase: "parameter"`).
    pub when: Option<String>,
    /// Whether the module's inputs and its own parameters were finite (`phase: "forward"`).
    pub inputs_finite: Option<bool>,
    pub parameters_finite: Option<bool>,
}

/// `saturation`: a walk of one loss's autograd graph.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Saturation {
    pub step: u64,
    /// `heavy` (a heavy step's loss) or `loss` (the first loss that was not finite).
    pub when: String,
    pub loss_finite: bool,
    pub nodes: u64,
    pub truncated: bool,
    pub ops: Vec<SaturatedOp>,
}

/// `saturation.ops[]`: one op whose saved input (or result) is at its limit.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SaturatedOp {
    pub op: String,
    pub grad_fn: String,
    /// A parameter's name, `"scalar"` for a Python number or a 0-d tensor, or absent.
    pub input: Option<String>,
    pub dtype: Option<String>,
    pub elements: u64,
    /// Elements at the singular point (0 for log or a denominator, +-1 for acos...).
    pub singular: u64,
    /// Elements between 0 and the format's smallest normal number.
    pub subnormal: u64,
    #[serde(deserialize_with = "num")]
    pub min: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub exponent: Option<f64>,
    pub depth: u64,
}

/// `loader`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Loader {
    pub loader: u32,
    #[serde(rename = "where")]
    pub location: Option<String>,
    pub dataset: Option<String>,
    pub length: Option<u64>,
    pub batch_size: Option<u64>,
    pub sampler: Option<String>,
    pub shuffle: Option<bool>,
    pub drop_last: Option<bool>,
    pub num_workers: Option<u64>,
    pub worker_init_fn: Option<bool>,
    pub persistent_workers: Option<bool>,
    pub distributed: Option<bool>,
    pub set_epoch_calls: Option<u64>,
    pub step: u64,
    pub iterable: Option<bool>,
}

/// Statistics of a float input.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct InputStats {
    #[serde(deserialize_with = "num")]
    pub mean: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub std: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub min: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub max: Option<f64>,
}

/// `epoch`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Epoch {
    pub step: Option<u64>,
    pub loader: u32,
    pub epoch: u64,
    pub role: String,
    pub batches: u64,
    /// The batches fingerprinted (and their classes counted): the first of the epoch, a
    /// distributed run's, and measured steps'. Absent in traces that fingerprinted every batch.
    pub batches_fingerprinted: Option<u64>,
    pub rows: u64,
    pub order: Option<String>,
    pub rows_fingerprinted: u64,
    pub duplicate_rows: u64,
    pub duplicate_batches: u64,
    pub input: Option<InputStats>,
    pub classes: Option<BTreeMap<String, u64>>,
    pub set_epoch: Option<i64>,
    pub exhausted: Option<bool>,
    pub row_sample: Option<Vec<String>>,
    pub row_sample_bits: Option<u32>,
    pub set_epoch_calls: Option<u64>,
}

/// `overlap`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Overlap {
    pub train_loader: u32,
    pub other_loader: u32,
    pub train_rows: u64,
    pub other_rows: u64,
    pub shared_rows: u64,
    pub complete: bool,
    pub same_dataset: bool,
    /// How rows are shared by construction: `same_dataset`, `indices`, `storage`, or absent
    /// where the trace cannot tell.
    pub construction: Option<String>,
    pub construction_rows: Option<u64>,
    pub same_rows: bool,
    /// Every row of the other loader's dataset is a training row by construction (the
    /// training split, or a sample of it).
    pub within_train: bool,
    pub step: u64,
}

/// One module of a `batchnorm` record.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct BatchnormModule {
    pub name: String,
    pub class: String,
    pub training: Option<bool>,
    #[serde(deserialize_with = "num")]
    pub mean_sum: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub var_sum: Option<f64>,
}

/// `batchnorm`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Batchnorm {
    pub step: u64,
    pub model: u32,
    pub modules: Vec<BatchnormModule>,
    pub count: u64,
}
