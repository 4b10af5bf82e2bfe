//! The contract a model implements to be checked.

use candle_core::{Device, Tensor};
use candle_nn::VarBuilder;

pub use mldebug_report::Task;

/// A small fixed training batch.
///
/// `targets` are I64 class ids (`[N]` or `[N, T]`, `-100` = ignore) for `Classification` and
/// `CausalLm`, F32 for `Regression`.
#[derive(Debug, Clone)]
pub struct Batch {
    /// What `forward` takes.
    pub input: Tensor,
    /// What the loss compares the output with.
    pub targets: Tensor,
}

pub use mldebug_report::IGNORE_INDEX;

/// A model the checks can run on: how to build it from seeded parameters, a batch to train on,
/// its forward pass and its loss. Implement it for your model (or let `mldebug check --model
/// crate::Net` wrap an unedited one).
pub trait DebugModel: Sized {
    /// Fresh parameters; every trainable parameter must come from `vb`.
    fn build(vb: VarBuilder) -> candle_core::Result<Self>;
    /// A small fixed training batch, the same for the same seed.
    fn batch(device: &Device, seed: u64) -> candle_core::Result<Batch>;
    /// Model output for `input`: logits for classification (`[N, C]`) and causal LMs (`[N, T, V]`).
    fn forward(&self, input: &Tensor, train: bool) -> candle_core::Result<Tensor>;
    /// Scalar training loss. Default: mean cross-entropy over the last dim, targets == -100 ignored.
    fn loss(&self, output: &Tensor, targets: &Tensor) -> candle_core::Result<Tensor> {
        crate::checks::loss::masked_cross_entropy(output, targets)
    }
    /// What the output means. Default: Classification.
    fn task() -> Task {
        Task::Classification
    }
    /// Variables that are not trained, by full name (`embed.weight`; a name ending in `.` covers
    /// every variable under that prefix): frozen weights, or state the training-mode forward
    /// never writes. Default: none.
    ///
    /// Buffers the forward pass overwrites in training mode, such as candle's `BatchNorm`
    /// running mean and variance, are found without being listed (see
    /// [`crate::checks::buffers`]); list only what that rule cannot see.
    fn buffers() -> Vec<String> {
        Vec::new()
    }
}
