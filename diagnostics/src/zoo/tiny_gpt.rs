//! `tiny-gpt`: a differentiable two-layer causal transformer language model, and the hooks its
//! buggy twins override.
//!
//! Token embedding → 2 × (RmsNorm → causal self-attention with rotary positions → residual,
//! RmsNorm → SiLU-gated MLP → residual) → RmsNorm → vocabulary logits `[N, T, V]`. Every op has
//! a backward: RmsNorm through `RmsNorm::forward_diff`, rope through `rope_slow`, softmax through
//! `ops::softmax` (candle's fused versions of all three stop gradients). The batch is 8 rows of
//! 16 random tokens, padded at the end, labels shifted by one and padding labelled `-100`.

use super::data::{self, LmBatch};
use super::layers::{head, scaled_down_linear, HEAD_INIT_STD};
use crate::model::{Batch, DebugModel, Task, IGNORE_INDEX};
use crate::nn::{self, Traced};
use crate::trace;
use candle_core::{DType, Device, Module, Result, Tensor, D};
use candle_nn::{Embedding, Linear, VarBuilder};
use std::marker::PhantomData;
use std::sync::Mutex;

/// Vocabulary size.
pub const VOCAB: usize = 32;
/// Model width.
pub const DIM: usize = 32;
/// Attention heads.
pub const HEADS: usize = 2;
/// Width of one head.
pub const HEAD_DIM: usize = DIM / HEADS;
/// Transformer blocks.
pub const LAYERS: usize = 2;
/// Hidden width of the MLP.
pub const MLP_DIM: usize = 64;
/// Rows in the batch.
pub const ROWS: usize = 8;
/// Tokens per row.
pub const SEQ: usize = 16;
/// RmsNorm epsilon (Llama's).
pub const NORM_EPS: f64 = 1e-5;
/// Rotary base frequency (Llama's).
pub const ROPE_THETA: f64 = 10_000.0;

/// The decisions a twin can get wrong; the defaults are the clean model's.
pub trait GptVariant: 'static {
    /// The target given to padding positions.
    const PAD_TARGET: i64 = IGNORE_INDEX;
    /// The projections' weights are stored divided by this and their inputs multiplied by it
    /// (1: plain layers). See [`Dense`].
    const MULTIPLIER: f64 = 1.0;

    /// The batch (clean: padded rows whose padding is labelled `-100`).
    fn batch(device: &Device, seed: u64) -> Result<LmBatch> {
        data::lm_batch(seed, ROWS, SEQ, VOCAB, Self::PAD_TARGET, device)
    }
    /// The additive attention mask for `t` positions (clean: [`causal_mask`]); `None` = none.
    fn attention_mask(t: usize, device: &Device, dtype: DType) -> Result<Option<Tensor>> {
        causal_mask(t, device, dtype).map(Some)
    }
    /// A normalisation layer: differentiable RmsNorm.
    fn norm(vb: VarBuilder) -> Result<Norm> {
        Ok(Norm::Diff(nn::rms_norm_diff(DIM, NORM_EPS, vb)?))
    }
    /// The training loss: mean cross-entropy over the unmasked positions.
    fn loss(output: &Tensor, targets: &Tensor) -> Result<Tensor> {
        crate::checks::loss::masked_cross_entropy(output, targets)
    }
    /// Whether forward keeps the last hidden states on the model (clean: no).
    const KEEPS_HIDDEN_STATES: bool = false;
    /// The MLP's up projection (clean: the traced linear layer, a matmul).
    fn up_projection(up: &Dense, h: &Tensor) -> Result<Tensor> {
        up.forward(h)
    }
}

/// The clean tiny GPT.
pub struct Clean;
impl GptVariant for Clean {}

/// A normalisation layer: candle's differentiable path or its fused kernel.
pub enum Norm {
    /// candle's differentiable RMS norm.
    Diff(Traced<nn::RmsNormDiff>),
    /// candle's fused RMS norm kernel (no backward: the grad-flow twin).
    Fused(Traced<candle_nn::RmsNorm>),
}

impl Module for Norm {
    fn forward(&self, xs: &Tensor) -> Result<Tensor> {
        match self {
            Norm::Diff(n) => n.forward(xs),
            Norm::Fused(n) => n.forward(xs),
        }
    }
}

/// A bias-free projection: `nn::linear_no_bias`, or with a multiplier `m` ≠ 1 a weight stored
/// `m` times smaller than candle's default init applied to an input `m` times larger. The two
/// compute the same function at init; they differ in how far an AdamW step (about the learning
/// rate per weight, whatever the gradient's scale) moves it: `m` times further.
pub struct Dense {
    linear: Traced<Linear>,
    multiplier: f64,
}

impl Dense {
    /// The weight, `[out, in]`.
    pub fn weight(&self) -> &Tensor {
        self.linear.inner().weight()
    }

    /// The traced layer's name.
    pub fn name(&self) -> &str {
        self.linear.name()
    }

    fn new(in_dim: usize, out_dim: usize, multiplier: f64, vb: VarBuilder) -> Result<Dense> {
        let linear = if multiplier == 1.0 {
            nn::linear_no_bias(in_dim, out_dim, vb)?
        } else {
            scaled_down_linear(in_dim, out_dim, multiplier, false, vb)?
        };
        Ok(Dense { linear, multiplier })
    }
}

impl Module for Dense {
    fn forward(&self, xs: &Tensor) -> Result<Tensor> {
        if self.multiplier == 1.0 {
            self.linear.forward(xs)
        } else {
            self.linear.forward(&(xs * self.multiplier)?)
        }
    }
}

struct Attention {
    name: String,
    q: Dense,
    k: Dense,
    v: Dense,
    o: Dense,
}

struct Block {
    attn_norm: Norm,
    attn: Attention,
    mlp_norm: Norm,
    gate: Dense,
    up: Dense,
    down: Dense,
}

/// A small decoder-only transformer; the variant decides the bug.
pub struct TinyGpt<V: GptVariant> {
    embed: Traced<Embedding>,
    blocks: Vec<Block>,
    norm: Norm,
    lm_head: Traced<Linear>,
    cos: Tensor,
    sin: Tensor,
    /// Hidden states kept by forward when [`GptVariant::KEEPS_HIDDEN_STATES`] (a twin's bug).
    hidden_states: Mutex<Vec<Tensor>>,
    variant: PhantomData<V>,
}

/// Rotary tables `[SEQ, HEAD_DIM / 2]`: constants, not parameters.
fn rope_tables(device: &Device, dtype: DType) -> Result<(Tensor, Tensor)> {
    let half = HEAD_DIM / 2;
    let mut angles = Vec::with_capacity(SEQ * half);
    for pos in 0..SEQ {
        for i in 0..half {
            let freq = 1.0 / ROPE_THETA.powf(2.0 * i as f64 / HEAD_DIM as f64);
            angles.push((pos as f64 * freq) as f32);
        }
    }
    let angles = Tensor::from_vec(angles, (SEQ, half), device)?;
    Ok((
        angles.cos()?.to_dtype(dtype)?,
        angles.sin()?.to_dtype(dtype)?,
    ))
}

/// `[T, T]` additive mask: 0 on and below the diagonal, -inf above.
pub fn causal_mask(t: usize, device: &Device, dtype: DType) -> Result<Tensor> {
    let m: Vec<f32> = (0..t)
        .flat_map(|i| (0..t).map(move |j| if j > i { f32::NEG_INFINITY } else { 0.0 }))
        .collect();
    Tensor::from_vec(m, (t, t), device)?.to_dtype(dtype)
}

impl Attention {
    fn new(multiplier: f64, vb: VarBuilder) -> Result<Attention> {
        Ok(Attention {
            name: vb.prefix(),
            q: Dense::new(DIM, DIM, multiplier, vb.pp("q"))?,
            k: Dense::new(DIM, DIM, multiplier, vb.pp("k"))?,
            v: Dense::new(DIM, DIM, multiplier, vb.pp("v"))?,
            o: Dense::new(DIM, DIM, multiplier, vb.pp("o"))?,
        })
    }

    fn forward(
        &self,
        x: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        let (n, t, _) = x.dims3()?;
        let heads = |y: Tensor| -> Result<Tensor> {
            y.reshape((n, t, HEADS, HEAD_DIM))?
                .transpose(1, 2)?
                .contiguous()
        };
        let q = heads(self.q.forward(x)?)?;
        let k = heads(self.k.forward(x)?)?;
        let v = heads(self.v.forward(x)?)?;
        let q = candle_nn::rotary_emb::rope_slow(&q, cos, sin)?;
        let k = candle_nn::rotary_emb::rope_slow(&k, cos, sin)?;
        let mut scores = (q.matmul(&k.t()?)? / (HEAD_DIM as f64).sqrt())?;
        if let Some(mask) = mask {
            scores = scores.broadcast_add(mask)?;
        }
        let probs = candle_nn::ops::softmax(&scores, D::Minus1)?;
        trace::record(
            &format!("{}.softmax", self.name),
            "softmax",
            Some(&scores),
            &probs,
        )?;
        let y = probs.matmul(&v)?.transpose(1, 2)?.reshape((n, t, DIM))?;
        self.o.forward(&y)
    }
}

impl<V: GptVariant> DebugModel for TinyGpt<V> {
    fn build(vb: VarBuilder) -> Result<Self> {
        let mut blocks = Vec::with_capacity(LAYERS);
        let m = V::MULTIPLIER;
        for i in 0..LAYERS {
            let vb = vb.pp(format!("blocks.{i}"));
            blocks.push(Block {
                attn_norm: V::norm(vb.pp("attn_norm"))?,
                attn: Attention::new(m, vb.pp("attn"))?,
                mlp_norm: V::norm(vb.pp("mlp_norm"))?,
                gate: Dense::new(DIM, MLP_DIM, m, vb.pp("mlp.gate"))?,
                up: Dense::new(DIM, MLP_DIM, m, vb.pp("mlp.up"))?,
                down: Dense::new(MLP_DIM, DIM, m, vb.pp("mlp.down"))?,
            });
        }
        let (cos, sin) = rope_tables(vb.device(), vb.dtype())?;
        Ok(TinyGpt {
            embed: nn::embedding(VOCAB, DIM, vb.pp("embed"))?,
            blocks,
            norm: V::norm(vb.pp("norm"))?,
            lm_head: head(DIM, VOCAB, false, HEAD_INIT_STD, vb.pp("lm_head"))?,
            cos,
            sin,
            hidden_states: Mutex::new(Vec::new()),
            variant: PhantomData,
        })
    }

    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        let b = V::batch(device, seed)?;
        Ok(Batch {
            input: b.input,
            targets: b.targets,
        })
    }

    fn forward(&self, input: &Tensor, _train: bool) -> Result<Tensor> {
        let mut x = self.embed.forward(input)?;
        let mask = V::attention_mask(input.dim(1)?, x.device(), x.dtype())?;
        for b in &self.blocks {
            let h = b.attn_norm.forward(&x)?;
            x = (x + b.attn.forward(&h, &self.cos, &self.sin, mask.as_ref())?)?;
            let h = b.mlp_norm.forward(&x)?;
            let gated = (b.gate.forward(&h)?.silu()? * V::up_projection(&b.up, &h)?)?;
            x = (x + b.down.forward(&gated)?)?;
        }
        if V::KEEPS_HIDDEN_STATES {
            self.hidden_states
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(x.clone());
        }
        self.lm_head.forward(&self.norm.forward(&x)?)
    }

    fn loss(&self, output: &Tensor, targets: &Tensor) -> Result<Tensor> {
        V::loss(output, targets)
    }

    fn task() -> Task {
        Task::CausalLm
    }
}
