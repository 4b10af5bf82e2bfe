//! The two-sample permutation test on the difference in means: relabel the pooled runs every way
//! that keeps the arm sizes and see how often |mean(A*) − mean(B*)| is at least as large.
//!
//! Exact (all C(n_A + n_B, n_A) splits) up to [`EXACT_MAX_SPLITS`]; Monte Carlo for pooled sizes
//! up to [`MONTE_CARLO_MAX_N`]; the normal approximation of the permutation distribution beyond.

use super::describe::mean;
use super::{at_least, normal_two_sided, PMethod, PermP};
use mldebug_text::rng::Rng;

/// Largest number of splits enumerated exactly (10 v 10 is 184,756).
pub const EXACT_MAX_SPLITS: f64 = 2e6;
/// Largest pooled sample handled by Monte Carlo.
pub const MONTE_CARLO_MAX_N: usize = 200;
/// Monte Carlo resamples.
pub const MONTE_CARLO_RESAMPLES: u32 = 100_000;

/// C(n, k) as f64.
pub fn choose(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

struct Enumerate<'a> {
    x: &'a [f64],
    total: f64,
    na: usize,
    nb: usize,
    target: f64,
    scale: f64,
    count: u64,
}

impl Enumerate<'_> {
    fn walk(&mut self, from: usize, left: usize, sum: f64) {
        if left == 0 {
            let diff = sum / self.na as f64 - (self.total - sum) / self.nb as f64;
            if at_least(diff.abs(), self.target, self.scale) {
                self.count += 1;
            }
            return;
        }
        for i in from..=self.x.len() - left {
            self.walk(i + 1, left - 1, sum + self.x[i]);
        }
    }
}

/// Two-sided permutation p for mean(a) − mean(b); `statistic` is that difference.
pub fn two_sample(a: &[f64], b: &[f64], rng: &mut Rng) -> PermP {
    let (na, nb) = (a.len(), b.len());
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let n = pooled.len();
    let splits = choose(n, na);
    let min_attainable = (2.0 / splits).min(1.0);
    let observed = mean(a) - mean(b);
    let target = observed.abs();
    let scale = pooled.iter().map(|x| x.abs()).fold(0.0, f64::max);
    if splits <= EXACT_MAX_SPLITS {
        let mut e = Enumerate {
            x: &pooled,
            total: pooled.iter().sum(),
            na,
            nb,
            target,
            scale,
            count: 0,
        };
        e.walk(0, na, 0.0);
        return PermP {
            statistic: observed,
            p: (e.count as f64 / splits).min(1.0),
            min_attainable,
            method: PMethod::Exact,
        };
    }
    if n <= MONTE_CARLO_MAX_N {
        let total: f64 = pooled.iter().sum();
        let mut work = pooled.clone();
        let mut k: u64 = 0;
        for _ in 0..MONTE_CARLO_RESAMPLES {
            let mut sum = 0.0;
            for i in 0..na {
                let j = i + rng.index(n - i);
                work.swap(i, j);
                sum += work[i];
            }
            let diff = sum / na as f64 - (total - sum) / nb as f64;
            if at_least(diff.abs(), target, scale) {
                k += 1;
            }
        }
        return PermP {
            statistic: observed,
            p: (k + 1) as f64 / (MONTE_CARLO_RESAMPLES as f64 + 1.0),
            min_attainable,
            method: PMethod::MonteCarlo {
                resamples: MONTE_CARLO_RESAMPLES,
            },
        };
    }
    // Sampling n_A of n without replacement: Var(ΣA) = n_A n_B σ² / (n − 1), σ² the population
    // variance of the pooled values; the difference in means is ΣA (1/n_A + 1/n_B) − const.
    let m = mean(&pooled);
    let pop_var = pooled.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n as f64;
    let var_sum = na as f64 * nb as f64 * pop_var / (n as f64 - 1.0);
    let sd_diff = var_sum.sqrt() * (1.0 / na as f64 + 1.0 / nb as f64);
    let p = if sd_diff > 0.0 {
        normal_two_sided(observed / sd_diff)
    } else {
        1.0
    };
    PermP {
        statistic: observed,
        p,
        min_attainable,
        method: PMethod::Normal,
    }
}
