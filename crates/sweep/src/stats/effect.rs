//! Standardized effect sizes: d_z for paired differences, Hedges' g for two independent arms.

use super::describe::{mean, sd, variance};

/// Cohen's d_z = mean(d) / sd(d); ±inf when every difference is the same non-zero value.
pub fn d_z(d: &[f64]) -> f64 {
    let (m, s) = (mean(d), sd(d));
    if s == 0.0 {
        return if m == 0.0 {
            0.0
        } else {
            m.signum() * f64::INFINITY
        };
    }
    m / s
}

/// Hedges' g = (mean(a) − mean(b)) / s_pooled · (1 − 3 / (4(n_a + n_b) − 9)).
pub fn hedges_g(a: &[f64], b: &[f64]) -> f64 {
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let pooled = (((na - 1.0) * variance(a) + (nb - 1.0) * variance(b)) / (na + nb - 2.0)).sqrt();
    let diff = mean(a) - mean(b);
    if pooled == 0.0 {
        return if diff == 0.0 {
            0.0
        } else {
            diff.signum() * f64::INFINITY
        };
    }
    diff / pooled * (1.0 - 3.0 / (4.0 * (na + nb) - 9.0))
}
