//! Seeded tensors for reproducible checks.
//!
//! candle's CPU RNG cannot be seeded (`Device::Cpu.set_seed` fails), so everything that must be the
//! same for the same `--seed` — parameter init, zoo batches — draws from here instead: the one
//! generator of the workspace ([`mldebug_text::rng::Rng`], xoshiro256** seeded through
//! SplitMix64) with the tensor constructors the checks need.
//!
//! [`SeededRng::derive`] gives an independent stream per name, so a parameter's initial values
//! depend only on the seed and its name, not on the order in which parameters are created.

use candle_core::{DType, Device, Result, Shape, Tensor};
use mldebug_text::rng::Rng;

/// The workspace's seeded generator, with tensor constructors; its scalar draws (`next_u64`,
/// `uniform`, `normal`, `below`) are [`Rng`]'s.
#[derive(Debug, Clone)]
pub struct SeededRng(Rng);

impl std::ops::Deref for SeededRng {
    type Target = Rng;
    fn deref(&self) -> &Rng {
        &self.0
    }
}

impl std::ops::DerefMut for SeededRng {
    fn deref_mut(&mut self) -> &mut Rng {
        &mut self.0
    }
}

/// Values drawn in f64 on the host, converted there and only then moved: not every device has
/// F64 (Metal does not).
fn on_device(data: Vec<f64>, shape: Shape, dtype: DType, device: &Device) -> Result<Tensor> {
    Tensor::from_vec(data, shape, &Device::Cpu)?
        .to_dtype(dtype)?
        .to_device(device)
}

impl SeededRng {
    /// A generator for `seed`; the same seed always gives the same stream.
    pub fn new(seed: u64) -> SeededRng {
        SeededRng(Rng::new(seed))
    }

    /// An independent stream for `label` under `seed` (e.g. a parameter name or "batch").
    pub fn derive(seed: u64, label: &str) -> SeededRng {
        SeededRng(Rng::derive(seed, label))
    }

    /// A tensor of `shape` drawn from N(mean, std²), built on the host and moved to `device`.
    pub fn normal_tensor<S: Into<Shape>>(
        &mut self,
        shape: S,
        mean: f64,
        std: f64,
        dtype: DType,
        device: &Device,
    ) -> Result<Tensor> {
        let shape = shape.into();
        let data: Vec<f64> = (0..shape.elem_count())
            .map(|_| mean + std * self.normal())
            .collect();
        on_device(data, shape, dtype, device)
    }

    /// A tensor of `shape` drawn uniformly from `[lo, hi)`.
    pub fn uniform_tensor<S: Into<Shape>>(
        &mut self,
        shape: S,
        lo: f64,
        hi: f64,
        dtype: DType,
        device: &Device,
    ) -> Result<Tensor> {
        let shape = shape.into();
        let data: Vec<f64> = (0..shape.elem_count())
            .map(|_| lo + (hi - lo) * self.uniform())
            .collect();
        on_device(data, shape, dtype, device)
    }

    /// `n` class ids drawn uniformly from `0..classes`, as an I64 tensor `[n]`.
    pub fn class_ids(&mut self, n: usize, classes: usize, device: &Device) -> Result<Tensor> {
        let data: Vec<i64> = (0..n).map(|_| self.below(classes as u64) as i64).collect();
        Tensor::from_vec(data, n, device)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_is_the_shared_generators() {
        let mut a = SeededRng::derive(3, "l1.weight");
        let mut b = Rng::derive(3, "l1.weight");
        assert_eq!(a.next_u64(), b.next_u64());
        assert_eq!(SeededRng::new(9).normal(), Rng::new(9).normal());
    }

    #[test]
    fn normal_moments_are_close() -> Result<()> {
        let mut r = SeededRng::new(1);
        let t = r.normal_tensor((100, 100), 2.0, 0.5, DType::F32, &Device::Cpu)?;
        let mean = t.mean_all()?.to_scalar::<f32>()?;
        let std = t
            .broadcast_sub(&t.mean_all()?)?
            .sqr()?
            .mean_all()?
            .sqrt()?
            .to_scalar::<f32>()?;
        assert!((mean - 2.0).abs() < 0.02, "mean {mean}");
        assert!((std - 0.5).abs() < 0.02, "std {std}");
        Ok(())
    }

    #[test]
    fn uniform_and_class_ids_stay_in_range() -> Result<()> {
        let mut r = SeededRng::new(2);
        let u = r
            .uniform_tensor(1000, -1.0, 3.0, DType::F32, &Device::Cpu)?
            .to_vec1::<f32>()?;
        assert!(u.iter().all(|&v| (-1.0..3.0).contains(&v)));
        let ids = r.class_ids(1000, 5, &Device::Cpu)?;
        assert_eq!(ids.dtype(), DType::I64);
        let ids = ids.to_vec1::<i64>()?;
        assert!(ids.iter().all(|&c| (0..5).contains(&c)));
        for c in 0..5 {
            assert!(ids.contains(&c), "class {c} never drawn");
        }
        Ok(())
    }
}
