//! `cnn`: a small convolutional classifier on 8×8 grey images, and its twin fed raw pixels.
//!
//! conv 3×3 (1→8) → ReLU → conv 3×3 (8→16) → ReLU → 4×4 average pool → linear (64→4).
//! 32 images, 8 per class. Average pooling, not max pooling: max pooling passes the gradient to
//! one input in four per stage, which starves the first convolution (its gradient came out
//! ~2e-3 of the head's, a vanishing-gradient warning on a model with nothing wrong).

use super::data;
use super::layers::{head, HEAD_INIT_STD};
use crate::model::{Batch, DebugModel};
use crate::nn::{self, Traced};
use candle_core::{Device, Module, Result, Tensor};
use candle_nn::{Conv2d, Conv2dConfig, Linear, VarBuilder};
use std::marker::PhantomData;

/// Side of the square single-channel images.
pub const SIDE: usize = 8;
/// Output classes.
pub const CLASSES: usize = 4;
/// Images in the batch.
pub const EXAMPLES: usize = 32;
const C1: usize = 8;
const C2: usize = 16;
/// Average-pool window (and stride) after the second convolution.
const POOL: usize = 4;

/// The decisions a twin can get wrong; the defaults are the clean model's.
pub trait CnnVariant: 'static {
    /// What the model is fed: standardised pixels.
    fn inputs(pixels: &Tensor) -> Result<Tensor> {
        data::standardise(pixels)
    }
}

/// The clean CNN.
pub struct Clean;
impl CnnVariant for Clean {}

/// `cnn-unnormalised`: the images go in as raw 0–255 pixel values.
pub struct Unnormalised;
impl CnnVariant for Unnormalised {
    fn inputs(pixels: &Tensor) -> Result<Tensor> {
        Ok(pixels.clone())
    }
}

/// Two convolutions and a linear head; the variant decides the bug.
pub struct Cnn<V: CnnVariant> {
    conv1: Traced<Conv2d>,
    conv2: Traced<Conv2d>,
    head: Traced<Linear>,
    variant: PhantomData<V>,
}

impl<V: CnnVariant> DebugModel for Cnn<V> {
    fn build(vb: VarBuilder) -> Result<Self> {
        let same = Conv2dConfig {
            padding: 1,
            ..Default::default()
        };
        Ok(Cnn {
            conv1: nn::conv2d(1, C1, 3, same, vb.pp("conv1"))?,
            conv2: nn::conv2d(C1, C2, 3, same, vb.pp("conv2"))?,
            head: head(
                C2 * (SIDE / POOL) * (SIDE / POOL),
                CLASSES,
                true,
                HEAD_INIT_STD,
                vb.pp("head"),
            )?,
            variant: PhantomData,
        })
    }

    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        let targets = data::balanced_labels(seed, EXAMPLES, CLASSES, device)?;
        let pixels = data::pixels(seed, &[EXAMPLES, 1, SIDE, SIDE], device)?;
        Ok(Batch {
            input: V::inputs(&pixels)?,
            targets,
        })
    }

    fn forward(&self, input: &Tensor, _train: bool) -> Result<Tensor> {
        let x = self.conv1.forward(input)?.relu()?;
        let x = self.conv2.forward(&x)?.relu()?.avg_pool2d(POOL)?;
        self.head.forward(&x.flatten_from(1)?)
    }
}
