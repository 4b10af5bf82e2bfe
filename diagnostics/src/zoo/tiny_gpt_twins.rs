//! The tiny GPT's buggy twins: each overrides one item of [`GptVariant`].

use super::data::{self, LmBatch};
use super::tiny_gpt::{Dense, GptVariant, Norm, DIM, NORM_EPS, ROWS, SEQ, VOCAB};
use crate::model::IGNORE_INDEX;
use crate::nn;
use crate::trace;
use candle_core::{DType, Device, Result, Tensor, D};
use candle_nn::VarBuilder;

/// `tiny-gpt-fused-norm`: RmsNorm through candle's fused kernel (`RmsNorm::forward`), which has
/// no backward: nothing before the final norm gets a gradient.
pub struct FusedNorm;
impl GptVariant for FusedNorm {
    fn norm(vb: VarBuilder) -> Result<Norm> {
        Ok(Norm::Fused(nn::rms_norm(DIM, NORM_EPS, vb)?))
    }
}

/// `tiny-gpt-no-causal-mask`: attention sees the whole row, future tokens included.
pub struct NoCausalMask;
impl GptVariant for NoCausalMask {
    fn attention_mask(_t: usize, _device: &Device, _dtype: DType) -> Result<Option<Tensor>> {
        Ok(None)
    }
}

/// `tiny-gpt-mask-times-inf`: the causal mask is built as "1 above the diagonal, times -inf",
/// which is meant to give -inf above and 0 elsewhere, but 0 × -inf is NaN: every allowed
/// attention score becomes NaN.
pub struct MaskTimesInf;
impl GptVariant for MaskTimesInf {
    fn attention_mask(t: usize, device: &Device, dtype: DType) -> Result<Option<Tensor>> {
        let future: Vec<f32> = (0..t)
            .flat_map(|i| (0..t).map(move |j| if j > i { 1.0 } else { 0.0 }))
            .collect();
        let future = Tensor::from_vec(future, (t, t), device)?.to_dtype(dtype)?;
        Ok(Some((future * f64::NEG_INFINITY)?))
    }
}

/// `tiny-gpt-pad-zero`: padding positions are labelled 0 (the pad token) instead of -100, so the
/// model is trained to predict padding.
pub struct PadLabelledZero;
impl GptVariant for PadLabelledZero {
    const PAD_TARGET: i64 = data::PAD_TOKEN as i64;
}

/// `tiny-gpt-all-masked`: every target of the batch is -100 (say, prompt-only rows) and the loss
/// divides the masked sum by the number of kept targets: 0/0.
pub struct AllMaskedZeroOverZero;
impl GptVariant for AllMaskedZeroOverZero {
    fn batch(device: &Device, seed: u64) -> Result<LmBatch> {
        let b = data::lm_batch(seed, ROWS, SEQ, VOCAB, IGNORE_INDEX, device)?;
        let targets = Tensor::full(IGNORE_INDEX, (ROWS, SEQ), device)?;
        Ok(LmBatch { targets, ..b })
    }
    fn loss(output: &Tensor, targets: &Tensor) -> Result<Tensor> {
        let logits = output.flatten_to(1)?;
        let targets = targets.flatten_all()?;
        let keep = targets.ne(IGNORE_INDEX)?;
        let safe = keep
            .where_cond(&targets, &targets.zeros_like()?)?
            .to_dtype(DType::U32)?;
        let logp = candle_nn::ops::log_softmax(&logits, 1)?;
        let picked = logp.gather(&safe.unsqueeze(1)?, 1)?.squeeze(1)?;
        let keep = keep.to_dtype(DType::F32)?;
        // The bug: no max(count, 1) guard.
        (picked * &keep)?.sum_all()?.neg()?.div(&keep.sum_all()?)
    }
}

/// `tiny-gpt-lr-x100`: the projections use a ×100 multiplier (weights stored 100× smaller, inputs
/// multiplied by 100): the same model at init, but every AdamW step moves the projections 100×
/// as far, a learning rate ×100 for them.
pub struct LrX100;
impl GptVariant for LrX100 {
    const MULTIPLIER: f64 = 100.0;
}

/// `tiny-gpt-activation-cache`: forward appends its last hidden states to a list on the model
/// ("to inspect later") and never clears it. Each entry is still attached to its autograd graph,
/// so every step keeps that step's activations alive: memory rises at every step.
pub struct ActivationCache;
impl GptVariant for ActivationCache {
    const KEEPS_HIDDEN_STATES: bool = true;
}

/// `tiny-gpt-broadcast-linear`: the MLP's up projection is computed by broadcasting the input
/// against the weight and summing over the input dimension, `(h[..., None, :] * W).sum(-1)`,
/// instead of a matmul: the same numbers, through a `[N, T, MLP, DIM]` intermediate `DIM` times
/// the size of the layer's output.
pub struct BroadcastLinear;
impl GptVariant for BroadcastLinear {
    fn up_projection(up: &Dense, h: &Tensor) -> Result<Tensor> {
        let w = up.weight().unsqueeze(0)?.unsqueeze(0)?; // [1, 1, MLP, DIM]
        let out = h.unsqueeze(2)?.broadcast_mul(&w)?.sum(D::Minus1)?; // [N, T, MLP]
        trace::record(up.name(), "linear", Some(h), &out)?;
        Ok(out)
    }
}
