//! The tiny GPT's buggy twins: each overrides one item of [`GptVariant`].

use super::data::{self, LmBatch};
use super::tiny_gpt::{GptVariant, Norm, DIM, NORM_EPS, ROWS, SEQ, VOCAB};
use crate::model::IGNORE_INDEX;
use crate::nn;
use candle_core::{DType, Device, Result, Tensor};
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
