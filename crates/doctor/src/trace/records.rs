//! The records of a run trace, as the embedded Python writes them (`torch/run/TRACE.md`,
//! version 1). Every field the judgement does not need to exist is optional, and fields this
//! reader does not know are ignored: the contract only ever adds fields within a version.
//!
//! Each field means what `torch/run/TRACE.md` says under its record; it is documented there,
//! once, rather than twice.
#![allow(missing_docs)]

use mldebug_report::non_finite;
use serde::Deserialize;
use std::collections::BTreeMap;

mod data;
mod loads;
pub use data::*;
pub use loads::*;

/// The trace contract version this reader understands.
pub const TRACE_VERSION: u32 = 1;

/// One line of a trace.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    /// The first line of a process's trace.
    Start(Start),
    /// Rank and world size from `torch.distributed` itself.
    Dist(Dist),
    /// A root module, at its first forward.
    Model(Model),
    /// An optimizer, at its first step.
    Optimizer(Optimizer),
    /// One optimizer step (boxed: by far the largest record).
    Step(Box<Step>),
    /// Which light steps are measured.
    Cadence(Cadence),
    /// Per-group gradient statistics on a heavy step.
    Grads(Grads),
    /// The peft configs the program built and the models' adapter modules, at the first step.
    Adapters(Adapters),
    /// One call of a loss function on an early step.
    LossCall(LossCall),
    /// Labels against inputs on an early step.
    Labels(Labels),
    /// Ids fed to an embedding, or class targets, outside their range.
    OutOfRange(OutOfRange),
    /// A module mode event.
    Mode(Mode),
    /// The first non-finite loss, activation or gradient.
    Nonfinite(Nonfinite),
    /// Ops at the limit of their domain in a loss's autograd graph.
    Saturation(Saturation),
    /// A DataLoader, at its first batch.
    Loader(Loader),
    /// One pass over a DataLoader.
    Epoch(Epoch),
    /// Rows shared between the training loader and another.
    Overlap(Overlap),
    /// BatchNorm running statistics on a heavy step, in a distributed run.
    Batchnorm(Batchnorm),
    /// A weights load: `load_state_dict` or transformers' `from_pretrained`.
    Load(Load),
    /// An optimizer about to step holds parameters a load left at init.
    LoadTrained(LoadTrained),
    /// The last line.
    End(End),
    /// A kind this reader does not know (a later contract's).
    #[serde(other)]
    Unknown,
}

/// Reads an optional number that may be written as `"NaN"`, `"inf"` or `"-inf"`.
fn num<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    non_finite::option::deserialize(d)
}

/// `start`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Start {
    pub trace: u32,
    pub pid: u64,
    pub ppid: Option<u64>,
    pub rank: Option<u32>,
    pub world_size: Option<u32>,
    pub local_rank: Option<u32>,
    pub argv: Vec<String>,
    pub python: Option<String>,
    pub torch: Option<String>,
    pub transformers: Option<String>,
    pub device: Option<String>,
    pub steps_limit: Option<u64>,
    pub heavy_steps: Option<u64>,
    /// A cycle window's rule and caps (`null` for a fixed number of steps).
    pub window: Option<Window>,
}

/// `start.window`: the process is watched for one cycle of the program, within caps.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Window {
    pub cycle: bool,
    /// The cap in optimizer steps.
    pub steps: u64,
    /// The cap in seconds after the first step (0: none).
    pub seconds: f64,
    /// The step at which the first steps are judged (a fail ends the window there).
    pub verdict_step: Option<u64>,
}

/// `dist`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Dist {
    pub rank: Option<u32>,
    pub world_size: Option<u32>,
    pub backend: Option<String>,
    pub step: u64,
}

/// `model`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Model {
    pub model: u32,
    pub class: String,
    pub module: Option<String>,
    #[serde(rename = "where")]
    pub location: Option<String>,
    pub shifts_labels: bool,
    pub parameters: u64,
    pub trainable: u64,
    pub tensors: u64,
    pub trainable_tensors: u64,
    pub dropout: u64,
    pub batchnorm: u64,
    pub lora: u64,
    pub wrapper: Option<String>,
    pub training: Option<bool>,
    pub dtype: Option<String>,
    /// The transformers config as a JSON object (any JSON here: read by `mldebug-memory`).
    pub config: Option<serde_json::Value>,
    pub attn_implementation: Option<String>,
    pub gradient_checkpointing: Option<bool>,
    pub lora_rank: Option<u64>,
    /// A list of module names or one string (`all-linear`, a pattern).
    pub lora_targets: Option<serde_json::Value>,
    pub step: u64,
    pub device: Option<String>,
    pub pad_token_id: Option<i64>,
}

/// One parameter group of an optimizer.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Group {
    pub tensors: u64,
    pub numel: u64,
    #[serde(deserialize_with = "num")]
    pub lr: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub weight_decay: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub momentum: Option<f64>,
    /// What kinds of parameters the group holds (`norm`, `embedding`, `bias`); the other
    /// tensors (weight matrices, kernels) are not counted.
    pub kinds: BTreeMap<String, KindCount>,
    /// Adam's `decoupled_weight_decay` (AdamW's decay); absent for other optimizers.
    pub decoupled_weight_decay: Option<bool>,
}

/// One kind of parameter in a group: tensors and their elements.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct KindCount {
    pub tensors: u64,
    pub numel: u64,
}

/// One gradient clip the program ran before a step (`clip_grad_norm_`, `clip_grad_value_`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Clip {
    /// `norm` or `value`.
    pub kind: String,
    /// `max_norm` or `clip_value`.
    #[serde(deserialize_with = "num")]
    pub threshold: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub norm_type: Option<f64>,
    /// The norm the clip returned: the clipped gradients' total norm before the clip, as the
    /// call saw them (still multiplied by the scale when `scaled`).
    #[serde(deserialize_with = "num")]
    pub norm: Option<f64>,
    pub tensors: u64,
    /// The gradients were still multiplied by a GradScaler's scale (clipped before
    /// `scaler.unscale_`).
    pub scaled: bool,
    #[serde(deserialize_with = "num")]
    pub scale: Option<f64>,
}

/// `optimizer`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Optimizer {
    pub optimizer: u32,
    pub class: String,
    #[serde(rename = "where")]
    pub location: Option<String>,
    pub tensors: u64,
    pub numel: u64,
    pub in_models: u64,
    pub not_in_models: u64,
    pub groups: Vec<Group>,
    /// No `torch.optim` optimizer: the steps of a hand-written update, measured from the
    /// program's backward passes.
    pub manual: bool,
    pub step: u64,
}

/// Memory at a step.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Memory {
    pub device: Option<String>,
    #[serde(deserialize_with = "num")]
    pub rss: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub allocated: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub max_allocated: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub reserved: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub rss_peak: Option<f64>,
}

/// `step`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Step {
    pub step: u64,
    pub optimizer: u32,
    #[serde(deserialize_with = "num")]
    pub time: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub step_s: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub data_wait_s: Option<f64>,
    pub forwards: u64,
    pub backwards: u64,
    #[serde(deserialize_with = "num")]
    pub loss: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub lr: Option<f64>,
    pub training: Option<bool>,
    pub grads_before_backward: Option<String>,
    #[serde(deserialize_with = "num")]
    pub grad_norm: Option<f64>,
    pub with_grad: Option<u64>,
    pub without_grad: Option<u64>,
    pub changed: Option<u64>,
    pub checked: Option<u64>,
    #[serde(deserialize_with = "num")]
    pub update_ratio: Option<f64>,
    pub memory: Option<Memory>,
    /// Memory at the heavy steps' stage boundaries, by point (`forward`, `backward`, ...).
    pub memory_stages: Option<BTreeMap<String, Memory>>,
    pub batch: Option<String>,
    #[serde(deserialize_with = "num")]
    pub param_checksum: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub grad_checksum: Option<f64>,
    /// The first training forward's main input, on heavy steps.
    pub input: Option<Input>,
    /// Host-device synchronisations the program made in this step's interval (CUDA, steps 2
    /// and 3); absent where they were not counted.
    pub syncs: Option<u64>,
    /// Where they were made, most frequent first.
    pub sync_sites: Vec<SyncSite>,
    /// The step ran a closure (`opt.step(closure)`): its forwards and backwards are inside it.
    pub closure: bool,
    pub grads_carried: Option<u64>,
    pub nograd_forwards: Option<u64>,
    pub update_sampled: Option<bool>,
    /// The gradient clips of the optimizer's tensors since its previous step.
    pub clips: Vec<Clip>,
    /// Of the losses of this optimizer's previous steps that were watched (`losses_watched`,
    /// at most 16), how many are still alive with their graph.
    pub losses_alive: Option<u64>,
    /// Of those, the ones whose backward kept the graph (`retain_graph=True`).
    pub losses_retained: Option<u64>,
    pub losses_watched: Option<u64>,
    /// How the loss backward was called on reduces its elements (heavy steps).
    pub loss_reduction: Option<LossReduction>,
    /// `Some(false)` on a light step the cadence left unmeasured: only the counters, the times,
    /// the loss and the learning rate are in it (absent: measured).
    pub measured: Option<bool>,
}

impl Step {
    /// Whether the step's tensors were measured (gradient norm, update, memory, checksums).
    pub fn is_measured(&self) -> bool {
        self.measured != Some(false)
    }
}

/// Which light steps a process measured (`cadence`, once, at its decision step).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Cadence {
    pub step: Option<u64>,
    /// Measured from step `from` on: the steps whose number is a multiple of this.
    pub stride: u64,
    /// The first step the stride rules; every step before it was measured.
    pub from: u64,
    /// The stride was set by `MLDEBUG_RUN_STRIDE`.
    pub fixed: bool,
    /// Median seconds the probes spent measuring a calibration step.
    #[serde(deserialize_with = "num")]
    pub measure_s: Option<f64>,
    /// Median seconds of those steps without the measurements.
    #[serde(deserialize_with = "num")]
    pub step_s: Option<f64>,
    /// The share of the program's time the measurements may take.
    #[serde(deserialize_with = "num")]
    pub budget: Option<f64>,
    /// Calibration steps timed.
    pub calibrated: u64,
}

/// The `loss_reduction` of a `step` record.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct LossReduction {
    /// The loss's `grad_fn` class (`NllLossBackward0`, `SumBackward0`, ...).
    pub grad_fn: Option<String>,
    /// `sum`, `mean`, `none`, or `null` where the graph does not say.
    pub reduction: Option<String>,
    /// The number of terms reduced.
    pub elements: Option<u64>,
}

/// One config of an `adapters` record.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct AdapterConfig {
    pub class: String,
    pub peft_type: Option<String>,
    pub r: Option<u64>,
    /// A list of module names or one string (`all-linear`, a pattern).
    pub target_modules: Option<serde_json::Value>,
    #[serde(rename = "where")]
    pub location: Option<String>,
}

/// One model of an `adapters` record.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct AdapterModel {
    pub model: u32,
    pub adapter_modules: u64,
    pub parameters: u64,
    pub trainable: u64,
    /// The optimizer that just stepped holds some of its parameters.
    pub stepped: Option<bool>,
}

/// `adapters`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Adapters {
    pub step: u64,
    /// The optimizer whose step wrote it.
    pub optimizer: Option<u32>,
    pub configs: Vec<AdapterConfig>,
    pub configs_built: u64,
    pub models: Vec<AdapterModel>,
}

/// One entry of a `step` record's `sync_sites`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SyncSite {
    /// `path:line` in the program.
    #[serde(rename = "where")]
    pub location: Option<String>,
    pub count: u64,
}

/// The `input` of a `step` record.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Input {
    pub model: u32,
    pub argument: Option<String>,
    pub shape: Vec<u64>,
    pub dtype: Option<String>,
    pub autocast: Option<String>,
}

/// One group of a `grads` record.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct GradGroup {
    pub name: String,
    pub tensors: u64,
    pub no_grad: u64,
    pub zero_grad: u64,
    #[serde(deserialize_with = "num")]
    pub grad_norm: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub weight_norm: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub update_norm: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub weight_norm_before: Option<f64>,
    pub frozen: u64,
    #[serde(deserialize_with = "num")]
    pub param_sum: Option<f64>,
    #[serde(deserialize_with = "num")]
    pub grad_sum: Option<f64>,
}

/// `grads`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Grads {
    pub step: u64,
    pub optimizer: u32,
    pub model: u32,
    pub groups: Vec<GradGroup>,
    pub no_grad: Vec<String>,
    pub not_in_optimizer: Vec<String>,
    pub not_in_optimizer_numel: u64,
    pub frozen_names: Vec<String>,
    pub frozen_count: Option<u64>,
    pub no_grad_count: Option<u64>,
}

/// `end`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct End {
    pub reason: String,
    pub steps: u64,
    pub exception: Option<String>,
    pub probe_errors: Vec<String>,
    /// The process ended while an optimizer's step was under way (a closure optimizer's first
    /// step, interrupted).
    pub in_step: bool,
    /// Root forwards with gradients, without, and backward calls over the whole run.
    pub forwards: Option<u64>,
    pub nograd_forwards: Option<u64>,
    pub backwards: Option<u64>,
    /// `torch.autograd.grad` calls that were no update's backward (torch.func transforms,
    /// create_graph inner steps, gradients of inputs).
    pub grads_taken: Option<u64>,
    /// Backward calls (and update-like `torch.autograd.grad` calls) whose graph reached leaf
    /// tensors of no module while no model had run and no optimizer existed.
    pub raw_backwards: Option<u64>,
    /// Why the watched window ended (`reason: "steps"`): `steps` (a fixed window), `cycle`,
    /// `cap_steps`, `cap_seconds`, `verdict`; `null` when the program ended on its own.
    pub window: Option<String>,
    /// The step the first evaluation led to, and the step the training loader's second pass
    /// began in (`null`: not seen).
    pub first_evaluation: Option<u64>,
    pub second_epoch: Option<u64>,
    #[serde(deserialize_with = "num")]
    pub time: Option<f64>,
    pub step: u64,
}
