//! Reading numbers back from a device: the only place checks move data to the host.
//!
//! Everything goes through F32 on the CPU, so the checks run unchanged on CUDA/Metal and in
//! half precision (`to_scalar::<f32>` needs the dtype to be exactly F32).

use candle_core::{DType, Device, Result, Tensor};

/// A one-element tensor (any rank, any dtype, any device) as f64.
pub(crate) fn scalar(t: &Tensor) -> Result<f64> {
    let v = host_f32(t)?;
    match v.as_slice() {
        [x] => Ok(f64::from(*x)),
        _ => candle_core::bail!("expected one value, got a tensor of shape {:?}", t.dims()),
    }
}

/// The model's loss as f64; a loss that is not one number is the model's error, said plainly.
pub(crate) fn loss_value(loss: &Tensor) -> Result<f64> {
    if loss.elem_count() != 1 {
        candle_core::bail!(
            "the loss must be one number (reduce it with a mean), got a tensor of shape {:?}",
            loss.dims()
        );
    }
    scalar(loss)
}

/// Every element, flattened, as f32 on the host.
pub(crate) fn host_f32(t: &Tensor) -> Result<Vec<f32>> {
    t.detach()
        .to_dtype(DType::F32)?
        .to_device(&Device::Cpu)?
        .flatten_all()?
        .to_vec1::<f32>()
}

/// Every element, flattened, as i64 on the host (class ids, token ids).
pub(crate) fn host_i64(t: &Tensor) -> Result<Vec<i64>> {
    t.detach()
        .to_dtype(DType::I64)?
        .to_device(&Device::Cpu)?
        .flatten_all()?
        .to_vec1::<i64>()
}

/// `[abs_min, abs_max, non_finite]` of `t` (the recorder's kernel), read back.
pub(crate) fn stats(t: &Tensor) -> Result<[f32; 3]> {
    let v = host_f32(&crate::trace::frame_stats(t)?)?;
    Ok([v[0], v[1], v[2]])
}

/// The L2 norm of `t`, computed on the device in F32 (NaN when `t` holds NaN).
pub(crate) fn l2_norm(t: &Tensor) -> Result<f64> {
    scalar(&t.detach().to_dtype(DType::F32)?.sqr()?.sum_all()?.sqrt()?)
}
