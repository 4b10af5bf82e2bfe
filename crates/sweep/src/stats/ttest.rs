//! Student's t for one sample (the paired t on differences) and Welch's unequal-variance t, each
//! with a two-sided p-value and a confidence interval for the mean (difference).

use statrs::distribution::{ContinuousCDF, StudentsT};

/// A t-test result for a mean or a difference of means.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct TTest {
    /// The estimate: mean of the differences, or mean(A) − mean(B).
    pub estimate: f64,
    /// Its standard error.
    pub se: f64,
    /// Degrees of freedom (fractional for Welch).
    pub df: f64,
    /// The t statistic.
    pub t: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Confidence interval at `level`.
    pub ci: (f64, f64),
    /// The interval's confidence level.
    pub level: f64,
}

/// Student's t with `df` degrees of freedom, or `None` when `df` is not a positive number (the
/// callers' sample sizes make that impossible; the statistics never panic on it regardless).
fn student(df: f64) -> Option<StudentsT> {
    StudentsT::new(0.0, 1.0, df).ok()
}

/// The t quantile at probability `q` with `df` degrees of freedom (NaN for an invalid `df`).
pub fn t_quantile(q: f64, df: f64) -> f64 {
    student(df).map_or(f64::NAN, |d| d.inverse_cdf(q))
}

/// Welch-Satterthwaite degrees of freedom for squared standard errors `va`, `vb` from samples
/// of `na`, `nb`. Written in the share r = va / (va + vb), so it does not overflow where the
/// textbook form squares a variance of 1e160; both zero gives the pooled na + nb − 2.
pub fn welch_df(va: f64, vb: f64, na: f64, nb: f64) -> f64 {
    let total = va + vb;
    if total.is_nan() || total <= 0.0 || total.is_infinite() {
        return na + nb - 2.0;
    }
    let r = va / total;
    1.0 / (r * r / (na - 1.0) + (1.0 - r) * (1.0 - r) / (nb - 1.0))
}

fn finish(estimate: f64, se: f64, df: f64, level: f64) -> TTest {
    let Some(dist) = student(df) else {
        return TTest {
            estimate,
            se,
            df,
            t: f64::NAN,
            p: f64::NAN,
            ci: (f64::NAN, f64::NAN),
            level,
        };
    };
    let half = dist.inverse_cdf(0.5 + level / 2.0) * se;
    let (t, p) = if se > 0.0 {
        let t = estimate / se;
        (t, (2.0 * dist.sf(t.abs())).min(1.0))
    } else if estimate == 0.0 {
        // Every difference identical and zero: no evidence of anything.
        (0.0, 1.0)
    } else {
        // Every difference identical and non-zero: the t statistic is infinite.
        (estimate.signum() * f64::INFINITY, 0.0)
    };
    TTest {
        estimate,
        se,
        df,
        t,
        p,
        ci: (estimate - half, estimate + half),
        level,
    }
}

/// One-sample t on `d` against 0 (the paired t when `d` are A − B per pair). Needs n ≥ 2.
pub fn one_sample(d: &[f64], level: f64) -> TTest {
    let n = d.len() as f64;
    let se = super::describe::sd(d) / n.sqrt();
    finish(super::describe::mean(d), se, n - 1.0, level)
}

/// Welch's t for mean(a) − mean(b) with Welch-Satterthwaite df. Needs n ≥ 2 in each sample.
pub fn welch(a: &[f64], b: &[f64], level: f64) -> TTest {
    use super::describe::{mean, variance};
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (va, vb) = (variance(a) / na, variance(b) / nb);
    let se = (va + vb).sqrt();
    finish(mean(a) - mean(b), se, welch_df(va, vb, na, nb), level)
}
