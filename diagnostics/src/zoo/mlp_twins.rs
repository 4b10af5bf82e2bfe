//! The MLP's buggy twins: each overrides one hook of [`MlpVariant`]; everything else is the clean
//! model's.

use super::layers::{detached_linear, zero_linear};
use super::mlp::{MlpVariant, CLASSES, EXAMPLES};
use crate::nn::Traced;
use candle_core::{Result, Tensor, D};
use candle_nn::{Linear, VarBuilder};

/// `mlp-loss-sign`: the loss is negated, so the optimizer pushes the targets' probability down.
pub struct LossSign;
impl MlpVariant for LossSign {
    fn loss(output: &Tensor, targets: &Tensor) -> Result<Tensor> {
        crate::checks::loss::masked_cross_entropy(output, targets)?.neg()
    }
}

/// `mlp-softmax-ce`: `forward` returns probabilities and the cross-entropy applies its own
/// log-softmax on top, capping how low the loss can go.
pub struct SoftmaxBeforeCe;
impl MlpVariant for SoftmaxBeforeCe {
    fn output(logits: &Tensor) -> Result<Tensor> {
        candle_nn::ops::softmax(logits, D::Minus1)
    }
}

/// `mlp-softmax-batch-axis`: the log-softmax runs over the batch axis (dim 0) instead of the
/// classes, so each example's output depends on every other example.
pub struct SoftmaxBatchAxis;
impl MlpVariant for SoftmaxBatchAxis {
    fn output(logits: &Tensor) -> Result<Tensor> {
        candle_nn::ops::log_softmax(logits, 0)
    }
}

/// `mlp-sum-reduction`: the loss sums the per-example cross-entropies instead of averaging them.
pub struct SumReduction;
impl MlpVariant for SumReduction {
    fn loss(output: &Tensor, targets: &Tensor) -> Result<Tensor> {
        let n = targets.dim(0)? as f64;
        crate::checks::loss::masked_cross_entropy(output, targets)? * n
    }
}

/// `mlp-zero-init`: every hidden weight and bias starts at 0, so all hidden units are the same
/// unit forever and no hidden weight gets a gradient at step 0.
pub struct ZeroInit;
impl MlpVariant for ZeroInit {
    fn hidden(
        in_dim: usize,
        out_dim: usize,
        _index: usize,
        vb: VarBuilder,
    ) -> Result<Traced<Linear>> {
        zero_linear(in_dim, out_dim, vb)
    }
}

/// `mlp-deep-sigmoid`: ten sigmoid layers; each multiplies the backward signal by at most 1/4,
/// so the first layers' gradients vanish.
pub struct DeepSigmoid;
impl MlpVariant for DeepSigmoid {
    const DEPTH: usize = 10;
    fn activation(x: &Tensor) -> Result<Tensor> {
        candle_nn::ops::sigmoid(x)
    }
}

/// `mlp-detached`: the first layer's weight is used through a detached copy, so the `Var` never
/// gets a gradient and never learns.
pub struct Detached;
impl MlpVariant for Detached {
    fn hidden(
        in_dim: usize,
        out_dim: usize,
        index: usize,
        vb: VarBuilder,
    ) -> Result<Traced<Linear>> {
        if index == 0 {
            detached_linear(in_dim, out_dim, vb)
        } else {
            crate::nn::linear(in_dim, out_dim, vb)
        }
    }
}

/// Majority:minority ratio of `mlp-imbalanced`: just past class-balance's 100:1 fail line.
pub const IMBALANCE: usize = 101;

/// `mlp-imbalanced`: class 0 outnumbers each other class 101:1.
pub struct Imbalanced;
impl MlpVariant for Imbalanced {
    fn class_counts() -> Vec<usize> {
        let minority = EXAMPLES / CLASSES / 8;
        let mut counts = vec![minority.max(1); CLASSES];
        counts[0] = IMBALANCE * counts[1];
        counts
    }
}
