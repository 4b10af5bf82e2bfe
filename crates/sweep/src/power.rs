//! Power: the minimum detectable effect (MDE) at 80% power and how many seeds an effect needs.
//!
//! Colas, Sigaud & Oudeyer (2018) with a central-t approximation: an effect ε is detected with
//! power 1 − β at two-sided level α when ε / se ≥ t_{1−α/2, ν} + t_{1−β, ν}. Paired: se = s_d/√n,
//! ν = n − 1. Unpaired: se² = s_A²/n_A + s_B²/n_B with Welch-Satterthwaite ν; planning uses n
//! seeds per arm. Small pilots underestimate σ, so a conservative variant plans with σ's upper
//! 80% one-sided confidence bound, σ·√((n−1)/χ²_{0.20, n−1}).

use crate::stats::ttest::t_quantile;
use statrs::distribution::{ChiSquared, ContinuousCDF};

/// The power the MDE is quoted at (the usual 80%).
pub const TARGET_POWER: f64 = 0.8;
/// One-sided confidence of the conservative σ bound (Colas et al.: plan with a pessimistic σ).
pub const SIGMA_BOUND_CONFIDENCE: f64 = 0.8;
/// Planning stops here: an effect that needs more seeds is reported as "more than this".
pub const MAX_SEEDS: usize = 100_000;

/// Power figures for one comparison.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Power {
    /// The significance level.
    pub alpha: f64,
    /// The power at the observed effect.
    pub power: f64,
    /// Smallest |Δ| detected with 80% power at the present sample size.
    pub mde: f64,
    /// The same with σ at its upper 80% bound.
    pub mde_conservative: f64,
    /// Seeds (pairs, or runs per arm) needed to detect the observed |Δ|; None if Δ = 0 or more
    /// than [`MAX_SEEDS`].
    pub seeds_for_observed: Option<usize>,
    /// The same with σ at its upper 80% bound.
    pub seeds_for_observed_conservative: Option<usize>,
    /// `--mde VALUE` and the seeds it needs.
    pub target: Option<f64>,
    /// Seeds `target` needs.
    pub seeds_for_target: Option<usize>,
    /// "pairs" or "runs per arm".
    pub unit: &'static str,
}

fn factor(alpha: f64, df: f64) -> f64 {
    t_quantile(1.0 - alpha / 2.0, df) + t_quantile(TARGET_POWER, df)
}

/// σ's upper one-sided bound from a sample SD with n − 1 df.
pub fn sigma_upper(sd: f64, n: usize) -> f64 {
    let df = (n - 1) as f64;
    // n ≥ 2 at every call; an invalid df gives NaN rather than a panic.
    ChiSquared::new(df).map_or(f64::NAN, |chi| {
        sd * (df / chi.inverse_cdf(1.0 - SIGMA_BOUND_CONFIDENCE)).sqrt()
    })
}

fn paired_mde(sd: f64, n: usize, alpha: f64) -> f64 {
    factor(alpha, (n - 1) as f64) * sd / (n as f64).sqrt()
}

fn unpaired_mde(sa: f64, sb: f64, na: usize, nb: usize, alpha: f64) -> f64 {
    let (va, vb) = (sa * sa / na as f64, sb * sb / nb as f64);
    let df = super::stats::ttest::welch_df(va, vb, na as f64, nb as f64);
    factor(alpha, df) * (va + vb).sqrt()
}

/// Smallest n ≥ 2 with mde(n) ≤ |effect| (mde decreasing in n).
fn seeds_needed(effect: f64, mde: impl Fn(usize) -> f64) -> Option<usize> {
    let effect = effect.abs();
    if effect == 0.0 || !effect.is_finite() {
        return None;
    }
    if mde(2) <= effect {
        return Some(2);
    }
    let mut hi = 4;
    while mde(hi) > effect {
        if hi >= MAX_SEEDS {
            return None;
        }
        hi = (hi * 2).min(MAX_SEEDS);
    }
    let mut lo = hi / 2;
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if mde(mid) <= effect {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// Power for a paired design: `sd_d` the SD of the n differences.
pub fn paired(sd_d: f64, n: usize, observed: f64, target: Option<f64>, alpha: f64) -> Power {
    let up = sigma_upper(sd_d, n);
    Power {
        alpha,
        power: TARGET_POWER,
        mde: paired_mde(sd_d, n, alpha),
        mde_conservative: paired_mde(up, n, alpha),
        seeds_for_observed: seeds_needed(observed, |m| paired_mde(sd_d, m, alpha)),
        seeds_for_observed_conservative: seeds_needed(observed, |m| paired_mde(up, m, alpha)),
        target,
        seeds_for_target: target.and_then(|t| seeds_needed(t, |m| paired_mde(sd_d, m, alpha))),
        unit: "pairs",
    }
}

/// Power for an unpaired design with arm SDs `sa`, `sb` and sizes `na`, `nb`.
pub fn unpaired(
    (sa, na): (f64, usize),
    (sb, nb): (f64, usize),
    observed: f64,
    target: Option<f64>,
    alpha: f64,
) -> Power {
    let (ua, ub) = (sigma_upper(sa, na), sigma_upper(sb, nb));
    Power {
        alpha,
        power: TARGET_POWER,
        mde: unpaired_mde(sa, sb, na, nb, alpha),
        mde_conservative: unpaired_mde(ua, ub, na, nb, alpha),
        seeds_for_observed: seeds_needed(observed, |m| unpaired_mde(sa, sb, m, m, alpha)),
        seeds_for_observed_conservative: seeds_needed(observed, |m| {
            unpaired_mde(ua, ub, m, m, alpha)
        }),
        target,
        seeds_for_target: target
            .and_then(|t| seeds_needed(t, |m| unpaired_mde(sa, sb, m, m, alpha))),
        unit: "runs per arm",
    }
}

/// Runs per arm an unpaired comparison needs to detect a true effect of `d` run-to-run standard
/// deviations with 80% power at two-sided level `alpha`: the planning sweep-compare itself does
/// (equal SDs, Welch df). `None` beyond [`MAX_SEEDS`].
pub fn runs_per_arm(d: f64, alpha: f64) -> Option<usize> {
    seeds_needed(d, |m| unpaired_mde(1.0, 1.0, m, m, alpha))
}

/// Pairs a paired comparison needs for an effect of `d` SDs when runs sharing a seed correlate
/// with `rho`: the differences then have SD √(2(1 − ρ)).
pub fn pairs_needed(d: f64, rho: f64, alpha: f64) -> Option<usize> {
    let sd_d = (2.0 * (1.0 - rho)).sqrt();
    seeds_needed(d, |m| paired_mde(sd_d, m, alpha))
}

/// The power of an unpaired comparison with `n` runs per arm against a true effect of `d` SDs,
/// in the same central-t approximation: P(T_ν > t_{1−α/2, ν} − d/se), se = √(2/n), ν = 2n − 2.
pub fn unpaired_power(d: f64, n: usize, alpha: f64) -> f64 {
    use statrs::distribution::StudentsT;
    if n < 2 {
        return f64::NAN;
    }
    let df = (2 * n - 2) as f64;
    let se = (2.0 / n as f64).sqrt();
    StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |t| {
        1.0 - t.cdf(t_quantile(1.0 - alpha / 2.0, df) - d.abs() / se)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64) {
        assert!(
            (got - want).abs() <= 1e-7 * want.abs(),
            "got {got}, want {want}"
        );
    }

    #[test]
    fn mde_matches_scipy() {
        // d = [0.8, 1.0, 0.8, 0.9, 0.7]: sd = numpy.std(d, ddof=1) = 0.11401754250991382;
        // (scipy.stats.t.ppf(0.975, 4) + scipy.stats.t.ppf(0.8, 4)) * sd / sqrt(5)
        //   = (2.7764451051977934 + 0.9409645772351816) * 0.0509901951359 = 0.18955007...
        let sd = 0.11401754250991382;
        let p = paired(sd, 5, 0.84, None, 0.05);
        close(
            p.mde,
            (2.7764451051977934 + 0.9409645772351816) * sd / 5f64.sqrt(),
        );
        // Upper bound: sd * sqrt(4 / scipy.stats.chi2.ppf(0.2, 4)), chi2.ppf(0.2, 4) = 1.648776618065969
        close(sigma_upper(sd, 5), sd * (4.0 / 1.648776618065969f64).sqrt());
        close(
            p.mde_conservative,
            (2.7764451051977934 + 0.9409645772351816) * sigma_upper(sd, 5) / 5f64.sqrt(),
        );
        // The observed 0.84 is far above the MDE at n = 2: (t.ppf(.975,1)+t.ppf(.8,1))*sd/sqrt(2)
        // = (12.706204736174698 + 1.3763819204711734) * 0.0806 = 1.135 > 0.84, so 3 pairs.
        assert_eq!(p.seeds_for_observed, Some(3));
    }

    #[test]
    fn seeds_needed_is_the_first_n_that_reaches_the_effect() {
        let p = paired(1.0, 5, 0.5, Some(0.25), 0.05);
        let n = p.seeds_for_observed.unwrap();
        assert!(paired_mde(1.0, n, 0.05) <= 0.5 && paired_mde(1.0, n - 1, 0.05) > 0.5);
        assert!(p.seeds_for_target.unwrap() > n);
        assert_eq!(paired(1.0, 5, 0.0, None, 0.05).seeds_for_observed, None);
        // Unpaired, equal SDs 1, Welch df at n per arm = 2(n-1): (t.ppf(.975, 2n-2) +
        // t.ppf(.8, 2n-2)) * sqrt(2/n) <= 1.0 first at n = 17 (scipy, loop over n).
        let u = unpaired((1.0, 5), (1.0, 5), 1.0, None, 0.05);
        assert_eq!(u.seeds_for_observed, Some(17));
        assert_eq!(runs_per_arm(1.0, 0.05), Some(17));
    }

    #[test]
    fn planning_figures_agree_with_the_mde_they_invert() {
        // At the planned n the MDE reaches d; one fewer does not.
        for d in [0.5, 0.8, 1.0, 1.5, 2.0] {
            let n = runs_per_arm(d, 0.05).unwrap();
            assert!(unpaired_mde(1.0, 1.0, n, n, 0.05) <= d);
            assert!(n == 2 || unpaired_mde(1.0, 1.0, n - 1, n - 1, 0.05) > d);
            // The power at the planned n is at least the target, just below it one run earlier.
            assert!(unpaired_power(d, n, 0.05) >= TARGET_POWER - 0.02, "{d} {n}");
        }
        // ρ = 0 pairs are independent runs: as many pairs as an unpaired design has runs per
        // arm, give or take the df (n − 1 against 2n − 2).
        let (p, u) = (
            pairs_needed(1.0, 0.0, 0.05).unwrap(),
            runs_per_arm(1.0, 0.05).unwrap(),
        );
        assert!(p >= u && p <= u + 2, "{p} {u}");
        // Correlation helps: ρ = 0.8 needs far fewer pairs.
        assert!(pairs_needed(0.5, 0.8, 0.05).unwrap() * 3 < pairs_needed(0.5, 0.0, 0.05).unwrap());
        // The power against an effect equal to the MDE is the target power, exactly: the MDE
        // is where d/se = t_{1−α/2} + t_{0.8}.
        for n in [3, 5, 20] {
            let mde = unpaired_mde(1.0, 1.0, n, n, 0.05);
            assert!(
                (unpaired_power(mde, n, 0.05) - TARGET_POWER).abs() < 1e-9,
                "{n}"
            );
        }
        assert!(unpaired_power(0.5, 5, 0.05) < unpaired_power(2.0, 5, 0.05));
    }
}
