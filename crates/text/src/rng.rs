//! The one seeded random number generator: parameter init and zoo batches (diagnostics),
//! bootstrap and sign-flip resampling (`sweep-compare --seed`), `quote --random --seed`.
//!
//! xoshiro256** seeded through SplitMix64 (Blackman and Vigna): fast, a 2^256 period, the same
//! stream for the same seed on every platform and build, and no dependency. It is not for
//! cryptography.
//!
//! [`Rng::derive`] gives an independent stream per name, so that (for example) a parameter's
//! initial values depend only on the seed and its name, not on the order of creation.

/// A seeded xoshiro256** generator.
#[derive(Debug, Clone)]
pub struct Rng {
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

impl Rng {
    /// A generator for `seed`; the same seed always gives the same stream.
    pub fn new(seed: u64) -> Rng {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Rng { s }
    }

    /// An independent stream for `label` under `seed` (a parameter name, "batch", …).
    pub fn derive(seed: u64, label: &str) -> Rng {
        let mut sm = seed ^ crate::hash::fnv1a(label.as_bytes());
        // One extra mix so that seeds differing in few bits still land far apart.
        Rng::new(splitmix64(&mut sm))
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

    /// Uniform integer in `0..n`, by Lemire's multiply-shift (bias below n / 2^64); 0 when
    /// `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A uniform index into a slice of `len` items (0 when `len` is 0).
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_different_seeds_differ() {
        let a: Vec<u64> = (0..8).map(|_| Rng::new(7).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut r1 = Rng::new(7);
        let mut r2 = Rng::new(8);
        let x: Vec<u64> = (0..4).map(|_| r1.next_u64()).collect();
        let y: Vec<u64> = (0..4).map(|_| r2.next_u64()).collect();
        assert_ne!(x, y);
    }

    #[test]
    fn the_stream_is_xoshiro256_star_star_from_splitmix64() {
        // Reference values: SplitMix64 from 0 gives the state, then xoshiro256**'s output
        // function (Blackman and Vigna's reference C code) on it.
        let mut sm = 0u64;
        assert_eq!(splitmix64(&mut sm), 0xE220_A839_7B1D_CDAF);
        let mut r = Rng::new(0);
        let first = r.next_u64();
        let s1 = {
            let mut sm = 0u64;
            splitmix64(&mut sm);
            splitmix64(&mut sm)
        };
        assert_eq!(first, s1.wrapping_mul(5).rotate_left(7).wrapping_mul(9));
    }

    #[test]
    fn derive_depends_on_label_not_on_order() {
        let mut a = Rng::derive(3, "l1.weight");
        let mut b = Rng::derive(3, "l1.bias");
        assert_ne!(a.next_u64(), b.next_u64());
        let _ = Rng::derive(3, "something else").next_u64();
        assert_eq!(
            Rng::derive(3, "l1.weight").next_u64(),
            Rng::derive(3, "l1.weight").next_u64()
        );
    }

    #[test]
    fn below_and_index_stay_in_range_and_cover_it() {
        let mut r = Rng::new(2);
        let draws: Vec<u64> = (0..1000).map(|_| r.below(5)).collect();
        assert!(draws.iter().all(|&d| d < 5));
        for c in 0..5 {
            assert!(draws.contains(&c), "{c} never drawn");
        }
        assert_eq!(r.index(0), 0);
        assert!((0..100).all(|_| r.index(3) < 3));
    }

    #[test]
    fn uniform_and_normal_have_their_moments() {
        let mut r = Rng::new(1);
        let n = 20_000;
        let u: Vec<f64> = (0..n).map(|_| r.uniform()).collect();
        assert!(u.iter().all(|&x| (0.0..1.0).contains(&x)));
        let mean_u = u.iter().sum::<f64>() / n as f64;
        assert!((mean_u - 0.5).abs() < 0.01, "{mean_u}");
        let z: Vec<f64> = (0..n).map(|_| r.normal()).collect();
        let mean = z.iter().sum::<f64>() / n as f64;
        let var = z.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.03, "{mean}");
        assert!((var - 1.0).abs() < 0.03, "{var}");
    }
}
