//! The statistics behind `sweep-compare`, free of I/O: plain functions on `&[f64]`.
//!
//! Distributions (Student's t, Beta, chi-squared, normal) come from `statrs`; everything else is
//! written here, because statrs lacks it or (for the exact Mann-Whitney p-value in 0.19.1) gets it
//! wrong: it returns the complement tail when the first sample is the smaller one.
//!
//! - [`describe`]: per-arm descriptives (mean, SD, median, IQM, type-7 quantiles, skewness).
//! - [`ttest`]: one-sample / paired t and Welch t, each with its confidence interval.
//! - [`signflip`]: exact sign-flip permutation test on paired differences.
//! - [`wilcoxon`]: exact Wilcoxon signed-rank test (mid-ranks, zeros dropped).
//! - [`permutation`]: exact two-sample permutation test on the difference in means.
//! - [`mannwhitney`]: exact Mann-Whitney U test and P(A > B).
//! - [`correlation`]: Pearson r and Spearman ρ (pairing diagnostics).
//! - [`binomial`]: Clopper-Pearson interval.
//! - [`effect`]: d_z and Hedges' g.
//! - [`holm`]: Holm-Bonferroni adjustment.
//! - [`bootstrap`]: the stratified bootstrap (drawing from the workspace's one generator, `mldebug_text::rng`).
//!
//! Every p-value that comes from a permutation distribution says how it was obtained
//! ([`PMethod`]) and what the smallest value it could have taken at this sample size is.

pub mod binomial;
pub mod bootstrap;
pub mod correlation;
pub mod describe;
pub mod effect;
pub mod holm;
pub mod mannwhitney;
pub mod permutation;
pub mod signflip;
pub mod ttest;
pub mod wilcoxon;

/// How a permutation-type p-value was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PMethod {
    /// Every arrangement enumerated (or counted exactly).
    Exact,
    /// Random arrangements; p = (k + 1) / (R + 1).
    MonteCarlo {
        /// How many.
        resamples: u32,
    },
    /// Large sample: the normal approximation of the permutation distribution.
    Normal,
}

/// A p-value from a permutation-type test, with the floor it could not go below.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PermP {
    /// The test statistic as observed.
    pub statistic: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// The smallest two-sided p-value this test can produce at this sample size.
    pub min_attainable: f64,
    /// How `p` was obtained.
    pub method: PMethod,
}

/// Relative tolerance when comparing a resampled statistic with the observed one, so the observed
/// arrangement always counts itself despite floating-point summation order.
pub(crate) const TIE_TOLERANCE: f64 = 1e-9;

/// `x >= y` up to [`TIE_TOLERANCE`] relative to `scale`.
pub(crate) fn at_least(x: f64, y: f64, scale: f64) -> bool {
    x >= y - TIE_TOLERANCE * scale.max(f64::MIN_POSITIVE)
}

/// Two-sided normal-approximation p for a standardized statistic.
pub(crate) fn normal_two_sided(z: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    let n = Normal::standard();
    (2.0 * n.sf(z.abs())).min(1.0)
}

#[cfg(test)]
mod tests;
