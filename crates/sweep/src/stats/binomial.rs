//! The Clopper-Pearson ("exact") interval for a binomial proportion, from Beta quantiles.

use statrs::distribution::{Beta, ContinuousCDF};

/// Two-sided Clopper-Pearson interval for `k` successes in `n` trials at `level` (e.g. 0.95).
/// (0, 1) when n = 0.
pub fn clopper_pearson(k: u64, n: u64, level: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let alpha = 1.0 - level;
    let (kf, nf) = (k as f64, n as f64);
    let lower = if k == 0 {
        0.0
    } else {
        // k ≤ n, so both shapes are positive; NaN rather than a panic if a caller breaks that.
        Beta::new(kf, nf - kf + 1.0).map_or(f64::NAN, |b| b.inverse_cdf(alpha / 2.0))
    };
    let upper = if k == n {
        1.0
    } else {
        Beta::new(kf + 1.0, nf - kf).map_or(f64::NAN, |b| b.inverse_cdf(1.0 - alpha / 2.0))
    };
    (lower, upper)
}
