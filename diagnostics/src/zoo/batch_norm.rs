//! `mlp-batchnorm` and `cnn-batchnorm`: the clean MLP and CNN with candle's `BatchNorm` after
//! each hidden layer, with (`AFFINE = true`) and without a learned scale and shift.
//!
//! In the zoo: `mlp-batchnorm`, `mlp-batchnorm-no-affine` and `cnn-batchnorm`. The CNN without
//! the affine part passes every check too, but memorises its batch in 140–161 of the 200 steps
//! (5 seeds), too close to the limit for a reference model; the tests run it
//! (`tests/it/buffers.rs`).
//!
//! Batch norm keeps its running mean and variance in the `VarBuilder` beside the weights; the
//! training forward overwrites them and the evaluation forward reads them. They are buffers,
//! not parameters: these models exist so that every check is seen to tell the two apart (no
//! "no gradient" for a running mean, no optimizer step on it, the eval-mode checks on the
//! running statistics). Every check must pass them, like the models they are built on.
//!
//! MLP: 16 standardised pixels → linear 32 → BN → ReLU → linear 32 → BN → ReLU → 4 classes.
//! CNN: conv 3×3 (1→8) → BN → ReLU → conv 3×3 (8→16) → BN → ReLU → 4×4 average pool →
//! linear (64→4). Same batches as `mlp` and `cnn`.

use super::layers::{head, HEAD_INIT_STD};
use super::{cnn, data, mlp};
use crate::model::{Batch, DebugModel};
use crate::nn::{self, Traced, TracedT};
use candle_core::{Device, Module, ModuleT, Result, Tensor};
use candle_nn::{BatchNorm, BatchNormConfig, Conv2d, Conv2dConfig, Linear, VarBuilder};

/// candle's default batch norm (eps 1e-5, momentum 0.1), with or without the affine part.
fn config(affine: bool) -> BatchNormConfig {
    BatchNormConfig {
        affine,
        ..BatchNormConfig::default()
    }
}

/// A hidden block: layer → batch norm → ReLU.
struct Block<L> {
    layer: Traced<L>,
    norm: TracedT<BatchNorm>,
}

impl<L: Module> Block<L> {
    fn forward(&self, x: &Tensor, train: bool) -> Result<Tensor> {
        self.norm.forward_t(&self.layer.forward(x)?, train)?.relu()
    }
}

/// The MLP with batch norm.
pub struct BnMlp<const AFFINE: bool> {
    hidden: Vec<Block<Linear>>,
    head: Traced<Linear>,
}

impl<const AFFINE: bool> DebugModel for BnMlp<AFFINE> {
    fn build(vb: VarBuilder) -> Result<Self> {
        let hidden = (0..2)
            .map(|i| {
                let in_dim = if i == 0 { mlp::PIXELS } else { mlp::HIDDEN };
                Ok(Block {
                    layer: nn::linear(in_dim, mlp::HIDDEN, vb.pp(format!("hidden.{i}")))?,
                    norm: nn::batch_norm(mlp::HIDDEN, config(AFFINE), vb.pp(format!("bn.{i}")))?,
                })
            })
            .collect::<Result<_>>()?;
        Ok(BnMlp {
            hidden,
            head: head(
                mlp::HIDDEN,
                mlp::CLASSES,
                true,
                HEAD_INIT_STD,
                vb.pp("head"),
            )?,
        })
    }

    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        <mlp::Mlp<mlp::Clean> as DebugModel>::batch(device, seed)
    }

    fn forward(&self, input: &Tensor, train: bool) -> Result<Tensor> {
        let mut x = input.clone();
        for block in &self.hidden {
            x = block.forward(&x, train)?;
        }
        self.head.forward(&x)
    }
}

/// The CNN with batch norm over channels (4-D input).
pub struct BnCnn<const AFFINE: bool> {
    conv1: Block<Conv2d>,
    conv2: Block<Conv2d>,
    head: Traced<Linear>,
}

const C1: usize = 8;
const C2: usize = 16;
const POOL: usize = 4;

impl<const AFFINE: bool> DebugModel for BnCnn<AFFINE> {
    fn build(vb: VarBuilder) -> Result<Self> {
        let same = Conv2dConfig {
            padding: 1,
            ..Default::default()
        };
        Ok(BnCnn {
            conv1: Block {
                layer: nn::conv2d(1, C1, 3, same, vb.pp("conv1"))?,
                norm: nn::batch_norm(C1, config(AFFINE), vb.pp("bn1"))?,
            },
            conv2: Block {
                layer: nn::conv2d(C1, C2, 3, same, vb.pp("conv2"))?,
                norm: nn::batch_norm(C2, config(AFFINE), vb.pp("bn2"))?,
            },
            head: head(
                C2 * (cnn::SIDE / POOL) * (cnn::SIDE / POOL),
                cnn::CLASSES,
                true,
                HEAD_INIT_STD,
                vb.pp("head"),
            )?,
        })
    }

    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        let targets = data::balanced_labels(seed, cnn::EXAMPLES, cnn::CLASSES, device)?;
        let pixels = data::pixels(seed, &[cnn::EXAMPLES, 1, cnn::SIDE, cnn::SIDE], device)?;
        Ok(Batch {
            input: data::standardise(&pixels)?,
            targets,
        })
    }

    fn forward(&self, input: &Tensor, train: bool) -> Result<Tensor> {
        let x = self.conv1.forward(input, train)?;
        let x = self.conv2.forward(&x, train)?.avg_pool2d(POOL)?;
        self.head.forward(&x.flatten_from(1)?)
    }
}
