//! The per-frame statistics kernel: `[abs_min, abs_max, non_finite]` of a tensor, as a `[3]` F32
//! tensor left on the tensor's device.
//!
//! Nothing here reads back to the host: the recorder stacks every frame's `[3]` tensor and reads
//! them all at once at the end of a step. `abs().max_all()` alone would be wrong: it skips NaN
//! (on CPU `max_all([1, NaN, 3]) == 3`), so non-finite values are counted separately, as the
//! elements where `x - x` is not equal to itself (it is 0 for finite `x` and NaN for NaN and ±inf).
//!
//! On CPU the three numbers come from one pass over the data (a custom op); elsewhere from a few
//! candle reductions that stay on the device.

use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CustomOp1, DType, Layout, Result, Shape, Tensor};

/// `[abs_min, abs_max, non_finite]` of `x` as a `[3]` F32 tensor on `x`'s device, detached.
///
/// `abs_min` and `abs_max` skip NaN (an infinity counts: `abs_max` is then `inf`); when every
/// element is NaN both are NaN. `non_finite` counts NaN and ±inf. Integer tensors have no
/// non-finite values.
pub fn frame_stats(x: &Tensor) -> Result<Tensor> {
    let x = x.detach();
    if x.device().is_cpu() {
        let x = if x.is_contiguous() {
            x
        } else {
            x.contiguous()?
        };
        return x.apply_op1_no_bwd(&FrameStats);
    }
    let x = x.to_dtype(DType::F32)?.flatten_all()?;
    let a = x.abs()?;
    // 0 where finite, NaN where NaN or ±inf.
    #[allow(clippy::eq_op)]
    let d = (&x - &x)?;
    let non_finite = d.ne(&d)?.to_dtype(DType::F32)?.sum_all()?;
    Tensor::stack(&[a.min_all()?, a.max_all()?, non_finite], 0)
}

/// One pass over a contiguous CPU tensor.
struct FrameStats;

/// Running `[abs_min, abs_max, non_finite]` over values already converted to f32.
fn fold(values: impl Iterator<Item = f32>) -> [f32; 3] {
    let (mut lo, mut hi, mut bad) = (f32::INFINITY, f32::NEG_INFINITY, 0u64);
    let mut seen = false;
    for v in values {
        if v.is_nan() {
            bad += 1;
            continue;
        }
        if v.is_infinite() {
            bad += 1;
        }
        let a = v.abs();
        lo = lo.min(a);
        hi = hi.max(a);
        seen = true;
    }
    if !seen {
        // Empty, or every element NaN: there is no magnitude to report.
        lo = f32::NAN;
        hi = f32::NAN;
    }
    [lo, hi, bad as f32]
}

impl CustomOp1 for FrameStats {
    fn name(&self) -> &'static str {
        "mldebug-frame-stats"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let (start, end) = layout.contiguous_offsets().ok_or_else(|| {
            candle_core::Error::Msg("frame stats need a contiguous tensor".into())
        })?;
        let out = match storage {
            CpuStorage::F32(v) => fold(v[start..end].iter().copied()),
            CpuStorage::F64(v) => fold(v[start..end].iter().map(|&x| x as f32)),
            CpuStorage::BF16(v) => fold(v[start..end].iter().map(|x| x.to_f32())),
            CpuStorage::F16(v) => fold(v[start..end].iter().map(|x| x.to_f32())),
            CpuStorage::U8(v) => fold(v[start..end].iter().map(|&x| f32::from(x))),
            CpuStorage::U32(v) => fold(v[start..end].iter().map(|&x| x as f32)),
            CpuStorage::I16(v) => fold(v[start..end].iter().map(|&x| f32::from(x))),
            CpuStorage::I32(v) => fold(v[start..end].iter().map(|&x| x as f32)),
            CpuStorage::I64(v) => fold(v[start..end].iter().map(|&x| x as f32)),
            other => candle_core::bail!("frame stats: unsupported dtype {:?}", other.dtype()),
        };
        Ok((CpuStorage::F32(out.to_vec()), Shape::from(3)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    #[test]
    fn nan_is_counted_where_max_all_hides_it() -> Result<()> {
        let x = Tensor::new(&[1f32, f32::NAN, -3.0, 0.5], &Device::Cpu)?;
        // The trap this kernel exists for.
        assert_eq!(x.abs()?.max_all()?.to_scalar::<f32>()?, 3.0);
        assert_eq!(frame_stats(&x)?.to_vec1::<f32>()?, vec![0.5, 3.0, 1.0]);
        Ok(())
    }

    #[test]
    fn infinities_count_and_set_abs_max() -> Result<()> {
        let x = Tensor::new(
            &[[2f32, f32::NEG_INFINITY], [f32::NAN, -0.25]],
            &Device::Cpu,
        )?;
        let s = frame_stats(&x.t()?)?.to_vec1::<f32>()?; // non-contiguous input
        assert_eq!(s, vec![0.25, f32::INFINITY, 2.0]);
        Ok(())
    }

    #[test]
    fn all_nan_gives_nan_magnitudes() -> Result<()> {
        let s =
            frame_stats(&Tensor::new(&[f32::NAN, f32::NAN], &Device::Cpu)?)?.to_vec1::<f32>()?;
        assert!(s[0].is_nan() && s[1].is_nan());
        assert_eq!(s[2], 2.0);
        Ok(())
    }

    #[test]
    fn other_dtypes_are_read_as_f32() -> Result<()> {
        let x = Tensor::new(&[-4f64, 1.0], &Device::Cpu)?.to_dtype(DType::BF16)?;
        assert_eq!(frame_stats(&x)?.to_vec1::<f32>()?, vec![1.0, 4.0, 0.0]);
        let ids = Tensor::new(&[3i64, 7], &Device::Cpu)?;
        assert_eq!(frame_stats(&ids)?.to_vec1::<f32>()?, vec![3.0, 7.0, 0.0]);
        Ok(())
    }

    #[test]
    fn stats_are_detached_from_the_graph() -> Result<()> {
        let v = candle_core::Var::new(&[1f32, 2.0], &Device::Cpu)?;
        assert!(!frame_stats(v.as_tensor())?.track_op());
        Ok(())
    }
}
