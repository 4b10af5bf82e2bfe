//! `mlp`: a small ReLU classifier on 4×4 grey images, and the hooks its buggy twins override.
//!
//! 16 standardised pixels → 32 → 32 → 4 classes, 32 examples (8 per class). Each hook of
//! [`MlpVariant`] is one decision a training script makes; the clean model makes every one of
//! them right, and each twin in [`super::mlp_twins`] gets exactly one wrong.

use super::data;
use super::layers::{head, HEAD_INIT_STD};
use crate::model::{Batch, DebugModel};
use crate::nn::{self, Traced};
use candle_core::{Device, Module, Result, Tensor};
use candle_nn::{Linear, VarBuilder};
use std::marker::PhantomData;

/// Features per example.
pub const PIXELS: usize = 16;
/// Hidden units per layer.
pub const HIDDEN: usize = 32;
/// Output classes.
pub const CLASSES: usize = 4;
/// Examples in the batch.
pub const EXAMPLES: usize = 32;

/// The decisions a twin can get wrong; the defaults are the clean model's.
pub trait MlpVariant: 'static {
    /// Hidden layers.
    const DEPTH: usize = 2;

    /// How many examples of each class the batch holds.
    fn class_counts() -> Vec<usize> {
        vec![EXAMPLES / CLASSES; CLASSES]
    }
    /// What the model is fed: standardised pixels.
    fn inputs(pixels: &Tensor) -> Result<Tensor> {
        data::standardise(pixels)
    }
    /// A hidden layer.
    fn hidden(
        in_dim: usize,
        out_dim: usize,
        _index: usize,
        vb: VarBuilder,
    ) -> Result<Traced<Linear>> {
        nn::linear(in_dim, out_dim, vb)
    }
    /// The hidden layers' activation: ReLU.
    fn activation(x: &Tensor) -> Result<Tensor> {
        x.relu()
    }
    /// What `forward` returns from the last layer's logits: the logits themselves.
    fn output(logits: &Tensor) -> Result<Tensor> {
        Ok(logits.clone())
    }
    /// The training loss: mean cross-entropy.
    fn loss(output: &Tensor, targets: &Tensor) -> Result<Tensor> {
        crate::checks::loss::masked_cross_entropy(output, targets)
    }
}

/// The clean MLP.
pub struct Clean;
impl MlpVariant for Clean {}

/// A multi-layer perceptron; the variant decides the bug.
pub struct Mlp<V: MlpVariant> {
    hidden: Vec<Traced<Linear>>,
    head: Traced<Linear>,
    variant: PhantomData<V>,
}

impl<V: MlpVariant> DebugModel for Mlp<V> {
    fn build(vb: VarBuilder) -> Result<Self> {
        let mut hidden = Vec::with_capacity(V::DEPTH);
        for i in 0..V::DEPTH {
            let in_dim = if i == 0 { PIXELS } else { HIDDEN };
            hidden.push(V::hidden(in_dim, HIDDEN, i, vb.pp(format!("hidden.{i}")))?);
        }
        Ok(Mlp {
            hidden,
            head: head(HIDDEN, CLASSES, true, HEAD_INIT_STD, vb.pp("head"))?,
            variant: PhantomData,
        })
    }

    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        let targets = data::labels_with_counts(seed, &V::class_counts(), device)?;
        let pixels = data::pixels(seed, &[targets.dim(0)?, PIXELS], device)?;
        Ok(Batch {
            input: V::inputs(&pixels)?,
            targets,
        })
    }

    fn forward(&self, input: &Tensor, _train: bool) -> Result<Tensor> {
        let mut x = input.clone();
        for layer in &self.hidden {
            x = V::activation(&layer.forward(&x)?)?;
        }
        V::output(&self.head.forward(&x)?)
    }

    fn loss(&self, output: &Tensor, targets: &Tensor) -> Result<Tensor> {
        V::loss(output, targets)
    }
}
