//! The Wilcoxon signed-rank test on paired differences, exact.
//!
//! Zero differences are dropped (Wilcoxon's method, scipy's default `zero_method="wilcox"`); tied
//! |d| get mid-ranks. Doubling the mid-ranks makes them integers, so the null distribution of W+
//! is counted exactly by a dynamic programme over rank sums, ties or not, for n ≤
//! [`EXACT_MAX_N`]; beyond that the normal approximation with the tie correction is used (no
//! continuity correction, as scipy).

use super::describe::{midranks, tie_groups};
use super::{normal_two_sided, PMethod, PermP};

/// Largest n (non-zero differences) counted exactly; the DP costs about n³ steps.
pub const EXACT_MAX_N: usize = 200;

/// Two-sided exact Wilcoxon signed-rank p; `statistic` is W+ (sum of ranks of positive d).
pub fn signed_rank(d: &[f64]) -> PermP {
    let nz: Vec<f64> = d.iter().copied().filter(|x| *x != 0.0).collect();
    let n = nz.len();
    if n == 0 {
        return PermP {
            statistic: 0.0,
            p: 1.0,
            min_attainable: 1.0,
            method: PMethod::Exact,
        };
    }
    let abs: Vec<f64> = nz.iter().map(|x| x.abs()).collect();
    let ranks = midranks(&abs);
    let w_plus: f64 = nz
        .iter()
        .zip(&ranks)
        .filter(|(x, _)| **x > 0.0)
        .map(|(_, r)| r)
        .sum();
    let min_attainable = (2.0 / 2f64.powi(n as i32)).min(1.0);
    if n <= EXACT_MAX_N {
        let r2: Vec<usize> = ranks.iter().map(|r| (r * 2.0).round() as usize).collect();
        let total: usize = r2.iter().sum();
        // prob[s] = P(Σ doubled ranks of positive signs = s) under random signs.
        let mut prob = vec![0.0f64; total + 1];
        prob[0] = 1.0;
        let mut reach = 0;
        for &r in &r2 {
            reach += r;
            for s in (0..=reach).rev() {
                let keep = prob[s] * 0.5;
                let add = if s >= r { prob[s - r] * 0.5 } else { 0.0 };
                prob[s] = keep + add;
            }
        }
        let w2 = (w_plus * 2.0).round() as usize;
        let upper: f64 = prob[w2..].iter().sum();
        let lower: f64 = prob[..=w2].iter().sum();
        return PermP {
            statistic: w_plus,
            p: (2.0 * upper.min(lower)).min(1.0),
            min_attainable,
            method: PMethod::Exact,
        };
    }
    let nf = n as f64;
    let mean = nf * (nf + 1.0) / 4.0;
    let ties: f64 = tie_groups(&abs)
        .iter()
        .map(|&t| (t * t * t - t) as f64)
        .sum();
    let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - ties / 48.0;
    PermP {
        statistic: w_plus,
        p: normal_two_sided((w_plus - mean) / var.sqrt()),
        min_attainable,
        method: PMethod::Normal,
    }
}
