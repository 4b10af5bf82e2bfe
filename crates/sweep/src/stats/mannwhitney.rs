//! The Mann-Whitney U test, exact, and the probability of superiority P(A > B) = U / (n_A n_B)
//! (ties count ½; rliable's "probability of improvement").
//!
//! Written here because statrs 0.19.1's exact path returns the complement tail when the first
//! sample is the smaller (0.95 instead of 0.05 for two separated groups of three). Ties get
//! mid-ranks; doubled mid-ranks are integers, so the null distribution of the rank sum is counted
//! exactly by a dynamic programme (ties or not) for pooled n ≤ [`EXACT_MAX_N`]; beyond that the
//! normal approximation with the tie correction (no continuity correction).

use super::describe::{midranks, tie_groups};
use super::permutation::choose;
use super::{normal_two_sided, PMethod, PermP};

/// Largest pooled sample counted exactly; the DP costs about n⁴/2 steps at equal arms.
pub const EXACT_MAX_N: usize = 60;

/// Mann-Whitney result: `test.statistic` is U_A (pairs where A > B, ties ½).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MannWhitney {
    /// The test: U_A, its p-value and how it was obtained.
    pub test: PermP,
    /// U_A / (n_A n_B): the estimated P(A > B), ties counted ½.
    pub prob_a_greater: f64,
}

/// U_A / (n_A n_B) directly (used by the bootstrap, where ranks would be wasted work).
pub fn prob_greater(a: &[f64], b: &[f64]) -> f64 {
    let mut u = 0.0;
    for &x in a {
        for &y in b {
            u += if x > y {
                1.0
            } else if x == y {
                0.5
            } else {
                0.0
            };
        }
    }
    u / (a.len() * b.len()) as f64
}

/// Two-sided exact Mann-Whitney U test of `a` against `b`.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> MannWhitney {
    let (na, nb) = (a.len(), b.len());
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let n = pooled.len();
    let ranks = midranks(&pooled);
    let rank_sum_a: f64 = ranks[..na].iter().sum();
    let u = rank_sum_a - (na * (na + 1)) as f64 / 2.0;
    let prob_a_greater = u / (na * nb) as f64;
    let min_attainable = (2.0 / choose(n, na)).min(1.0);
    let test = if n <= EXACT_MAX_N {
        let r2: Vec<usize> = ranks.iter().map(|r| (r * 2.0).round() as usize).collect();
        let total: usize = r2.iter().sum();
        // ways[k][s]: subsets of size k with doubled rank sum s (as f64; only ratios matter).
        let mut ways = vec![vec![0.0f64; total + 1]; na + 1];
        ways[0][0] = 1.0;
        for (i, &r) in r2.iter().enumerate() {
            for k in (1..=na.min(i + 1)).rev() {
                let (lo, hi) = ways.split_at_mut(k);
                let prev = &lo[k - 1];
                let cur = &mut hi[0];
                for s in (r..=total).rev() {
                    cur[s] += prev[s - r];
                }
            }
        }
        let dist = &ways[na];
        let all: f64 = dist.iter().sum();
        let obs = (rank_sum_a * 2.0).round() as usize;
        let upper: f64 = dist[obs..].iter().sum::<f64>() / all;
        let lower: f64 = dist[..=obs].iter().sum::<f64>() / all;
        PermP {
            statistic: u,
            p: (2.0 * upper.min(lower)).min(1.0),
            min_attainable,
            method: PMethod::Exact,
        }
    } else {
        let (naf, nbf, nf) = (na as f64, nb as f64, n as f64);
        let ties: f64 = tie_groups(&pooled)
            .iter()
            .map(|&t| (t * t * t - t) as f64)
            .sum();
        let var = naf * nbf / 12.0 * ((nf + 1.0) - ties / (nf * (nf - 1.0)));
        let z = (u - naf * nbf / 2.0) / var.sqrt();
        PermP {
            statistic: u,
            p: if var > 0.0 { normal_two_sided(z) } else { 1.0 },
            min_attainable,
            method: PMethod::Normal,
        }
    };
    MannWhitney {
        test,
        prob_a_greater,
    }
}
