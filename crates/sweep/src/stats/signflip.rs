//! The sign-flip permutation test on paired differences: under H0 each difference is as likely
//! to be positive as negative, so flip signs and see how often |Σd| is at least as large.
//!
//! Exact for n ≤ [`EXACT_MAX_N`] by meet-in-the-middle (2^(n/2) sums per half, sorted, counted by
//! binary search); Monte Carlo up to [`MONTE_CARLO_MAX_N`]; the normal approximation beyond
//! (Σd / √Σd², the permutation distribution's own variance).

use super::{at_least, normal_two_sided, PMethod, PermP, TIE_TOLERANCE};
use mldebug_text::rng::Rng;

/// Largest n enumerated exactly (2 × 2^15 partial sums).
pub const EXACT_MAX_N: usize = 30;
/// Largest n handled by Monte Carlo; beyond it the normal approximation is accurate.
pub const MONTE_CARLO_MAX_N: usize = 100;
/// Monte Carlo resamples.
pub const MONTE_CARLO_RESAMPLES: u32 = 100_000;

fn half_sums(d: &[f64]) -> Vec<f64> {
    let mut sums = vec![0.0];
    for &x in d {
        let mut next = Vec::with_capacity(sums.len() * 2);
        for &s in &sums {
            next.push(s + x);
            next.push(s - x);
        }
        sums = next;
    }
    sums
}

/// Two-sided sign-flip p for paired differences `d` (statistic: Σd).
pub fn sign_flip(d: &[f64], rng: &mut Rng) -> PermP {
    let n = d.len();
    let nonzero = d.iter().filter(|x| **x != 0.0).count();
    let min_attainable = (2.0 / 2f64.powi(nonzero as i32)).min(1.0);
    let observed: f64 = d.iter().sum();
    let target = observed.abs();
    let scale: f64 = d.iter().map(|x| x.abs()).sum();
    let tol = TIE_TOLERANCE * scale.max(f64::MIN_POSITIVE);
    if target <= tol {
        return PermP {
            statistic: observed,
            p: 1.0,
            min_attainable,
            method: PMethod::Exact,
        };
    }
    if n <= EXACT_MAX_N {
        let (left, right) = d.split_at(n / 2);
        let a = half_sums(left);
        let mut b = half_sums(right);
        b.sort_by(f64::total_cmp);
        let mut count: u64 = 0;
        for s in a {
            // s + t >= target - tol  or  s + t <= -target + tol
            let hi = b.partition_point(|&t| t < target - tol - s);
            count += (b.len() - hi) as u64;
            let lo = b.partition_point(|&t| t <= -target + tol - s);
            count += lo as u64;
        }
        let p = count as f64 / 2f64.powi(n as i32);
        return PermP {
            statistic: observed,
            p: p.min(1.0),
            min_attainable,
            method: PMethod::Exact,
        };
    }
    if n <= MONTE_CARLO_MAX_N {
        let mut k: u64 = 0;
        for _ in 0..MONTE_CARLO_RESAMPLES {
            let mut s = 0.0;
            let mut bits = 0u64;
            for (i, &x) in d.iter().enumerate() {
                if i % 64 == 0 {
                    bits = rng.next_u64();
                }
                s += if bits & 1 == 1 { x } else { -x };
                bits >>= 1;
            }
            if at_least(s.abs(), target, scale) {
                k += 1;
            }
        }
        let p = (k + 1) as f64 / (MONTE_CARLO_RESAMPLES as f64 + 1.0);
        return PermP {
            statistic: observed,
            p,
            min_attainable,
            method: PMethod::MonteCarlo {
                resamples: MONTE_CARLO_RESAMPLES,
            },
        };
    }
    let z = observed / d.iter().map(|x| x * x).sum::<f64>().sqrt();
    PermP {
        statistic: observed,
        p: normal_two_sided(z),
        min_attainable,
        method: PMethod::Normal,
    }
}
