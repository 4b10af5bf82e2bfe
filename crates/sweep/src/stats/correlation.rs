//! Pearson r and Spearman ρ of paired values: how much the shared seed ties A_i to B_i.

use super::describe::{mean, midranks};

/// Pearson correlation; NaN when either side is constant.
pub fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let (mx, my) = (mean(x), mean(y));
    let mut sxy = 0.0;
    let mut sxx = 0.0;
    let mut syy = 0.0;
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx == 0.0 || syy == 0.0 {
        return f64::NAN;
    }
    (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0)
}

/// Spearman rank correlation (Pearson on mid-ranks).
pub fn spearman(x: &[f64], y: &[f64]) -> f64 {
    pearson(&midranks(x), &midranks(y))
}
