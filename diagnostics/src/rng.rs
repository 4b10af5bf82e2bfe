//! A small seeded random number generator for reproducible checks.
//!
//! candle's CPU RNG cannot be seeded (`Device::Cpu.set_seed` fails), so everything that must be the
//! same for the same `--seed` — parameter init, zoo batches — draws from here instead. The
//! generator is xoshiro256** seeded through SplitMix64 (Blackman and Vigna); it is fast, has a
//! 2^256 period and is more than good enough for initialising weights. It is not for
//! cryptography.
//!
//! [`SeededRng::derive`] gives an independent stream per name, so a parameter's initial values
//! depend only on the seed and its name, not on the order in which parameters are created.

use candle_core::{DType, Device, Result, Shape, Tensor};

/// A seeded xoshiro256** generator.
#[derive(Debug, Clone)]
pub struct SeededRng {
    s: [u64; 4],
}

/// One SplitMix64 step: advances `state` and returns a well-mixed output.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A stable (across runs and platforms) hash of a name.
fn fnv1a(label: &str) -> u64 {
    mldebug_text::hash::fnv1a(label.as_bytes())
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
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        SeededRng { s }
    }

    /// An independent stream for `label` under `seed` (e.g. a parameter name or "batch").
    pub fn derive(seed: u64, label: &str) -> SeededRng {
        let mut sm = seed ^ fnv1a(label);
        // One extra mix so that seeds differing in few bits still land far apart.
        SeededRng::new(splitmix64(&mut sm))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, 1)`, with 53 bits of precision.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal (mean 0, std 1), by the Box–Muller transform.
    pub fn normal(&mut self) -> f64 {
        // 1 - u is in (0, 1], so the log is finite.
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Uniform integer in `0..n` (`n > 0`), by Lemire's multiply-shift (bias < n / 2^64).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "SeededRng::below(0)");
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
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
    fn same_seed_same_stream_and_different_seeds_differ() {
        let a: Vec<u64> = (0..8).map(|_| SeededRng::new(7).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut r1 = SeededRng::new(7);
        let mut r2 = SeededRng::new(8);
        let x: Vec<u64> = (0..4).map(|_| r1.next_u64()).collect();
        let y: Vec<u64> = (0..4).map(|_| r2.next_u64()).collect();
        assert_ne!(x, y);
    }

    #[test]
    fn derive_depends_on_label_not_on_order() {
        let mut a = SeededRng::derive(3, "l1.weight");
        let mut b = SeededRng::derive(3, "l1.bias");
        assert_ne!(a.next_u64(), b.next_u64());
        let _ = SeededRng::derive(3, "something else").next_u64();
        assert_eq!(
            SeededRng::derive(3, "l1.weight").next_u64(),
            SeededRng::derive(3, "l1.weight").next_u64()
        );
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
