//! Loss helpers shared by the default `DebugModel::loss` and the checks.

use candle_core::{DType, Result, Tensor, D};
use mldebug_report::IGNORE_INDEX;

/// Mean cross-entropy over the last dim of `logits`, ignoring targets equal to `IGNORE_INDEX`.
///
/// `logits` are `[.., C]` and `targets` the same shape without the last dim (I64 class ids, or any
/// integer dtype). candle's `cross_entropy` has no ignore index and fails on `-100`, so the mask is
/// applied by hand: masked positions contribute exactly nothing (not even a NaN from their logits),
/// and the mean is over the kept positions. With every target masked the loss is exactly `0` and
/// every gradient is zero (PyTorch returns NaN there, 0/0).
///
/// The loss is computed in F32 whatever the logits' dtype, so half-precision logits do not lose
/// the small differences between classes.
pub fn masked_cross_entropy(logits: &Tensor, targets: &Tensor) -> Result<Tensor> {
    let classes = logits.dim(D::Minus1)?;
    let lead = &logits.dims()[..logits.rank() - 1];
    if targets.dims() != lead {
        candle_core::bail!(
            "cross-entropy: logits {:?} need targets of shape {lead:?} (the logits without the class dim), got {:?}",
            logits.dims(),
            targets.dims()
        );
    }
    if targets.dtype().is_float() {
        candle_core::bail!(
            "cross-entropy: targets must be integer class ids, got {:?}",
            targets.dtype()
        );
    }
    let logits = logits.to_dtype(DType::F32)?.reshape(((), classes))?;
    let targets = targets.to_dtype(DType::I64)?.flatten_all()?;
    let keep = targets.ne(IGNORE_INDEX)?;
    let safe = keep
        .where_cond(&targets, &targets.zeros_like()?)?
        .to_dtype(DType::U32)?
        .contiguous()?;
    let logp = candle_nn::ops::log_softmax(&logits, D::Minus1)?;
    let picked = logp.gather(&safe.unsqueeze(1)?, 1)?.squeeze(1)?;
    // where_cond, not a multiply by the mask: a -inf logit at a masked position must not turn
    // 0 * inf into NaN.
    let nll = keep.where_cond(&picked.neg()?, &picked.zeros_like()?)?;
    let kept = keep.to_dtype(DType::F32)?.sum_all()?.maximum(1f64)?;
    nll.sum_all()?.div(&kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, Var};

    fn logits() -> Result<Tensor> {
        Tensor::new(
            &[[2.0f32, 0.5, -1.0], [0.1, 0.2, 0.3], [-3.0, 1.0, 4.0]],
            &Device::Cpu,
        )
    }

    #[test]
    fn equals_candle_cross_entropy_when_nothing_is_masked() -> Result<()> {
        let t = Tensor::new(&[0i64, 2, 1], &Device::Cpu)?;
        let ours = masked_cross_entropy(&logits()?, &t)?.to_scalar::<f32>()?;
        let theirs = candle_nn::loss::cross_entropy(&logits()?, &t.to_dtype(DType::U32)?)?
            .to_scalar::<f32>()?;
        assert!((ours - theirs).abs() < 1e-6, "{ours} vs {theirs}");
        Ok(())
    }

    #[test]
    fn masked_positions_are_left_out_of_the_mean() -> Result<()> {
        let t = Tensor::new(&[0i64, -100, 1], &Device::Cpu)?;
        let ours = masked_cross_entropy(&logits()?, &t)?.to_scalar::<f32>()?;
        let kept = logits()?.index_select(&Tensor::new(&[0u32, 2], &Device::Cpu)?, 0)?;
        let expect =
            candle_nn::loss::cross_entropy(&kept, &Tensor::new(&[0u32, 1], &Device::Cpu)?)?
                .to_scalar::<f32>()?;
        assert!((ours - expect).abs() < 1e-6);
        Ok(())
    }

    #[test]
    fn all_masked_is_exactly_zero_with_zero_grads() -> Result<()> {
        let w = Var::from_tensor(&logits()?)?;
        let t = Tensor::new(&[-100i64, -100, -100], &Device::Cpu)?;
        let loss = masked_cross_entropy(w.as_tensor(), &t)?;
        let v = loss.to_scalar::<f32>()?;
        assert_eq!(v.to_bits(), 0f32.to_bits(), "loss {v}");
        let g = loss.backward()?;
        let g = g.get(&w).expect("grad").flatten_all()?.to_vec1::<f32>()?;
        assert!(g.iter().all(|&x| x == 0.0), "{g:?}");
        Ok(())
    }

    #[test]
    fn a_non_finite_logit_at_a_masked_position_does_not_leak_into_the_loss() -> Result<()> {
        let l = Tensor::new(&[[f32::NEG_INFINITY, 0.0], [1.0, 2.0]], &Device::Cpu)?;
        let t = Tensor::new(&[-100i64, 1], &Device::Cpu)?;
        assert!(masked_cross_entropy(&l, &t)?
            .to_scalar::<f32>()?
            .is_finite());
        Ok(())
    }

    #[test]
    fn lm_shapes_and_bad_shapes() -> Result<()> {
        let l = Tensor::zeros((2, 3, 5), DType::F32, &Device::Cpu)?;
        let t = Tensor::new(&[[1i64, 2, -100], [0, 4, 3]], &Device::Cpu)?;
        let v = masked_cross_entropy(&l, &t)?.to_scalar::<f32>()?;
        assert!((v - 5f32.ln()).abs() < 1e-5);
        assert!(masked_cross_entropy(&l, &Tensor::new(&[1i64, 2], &Device::Cpu)?).is_err());
        Ok(())
    }
}
