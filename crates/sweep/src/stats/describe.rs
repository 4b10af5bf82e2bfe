//! Per-arm descriptives: mean, SD (n − 1), median, IQM, quantiles and skewness.

/// The descriptives printed for each arm.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Describe {
    /// Usable runs.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1); NaN when n < 2.
    pub sd: f64,
    /// Median.
    pub median: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Interquartile mean: scipy's `trim_mean(x, 0.25)`, which drops ⌊n/4⌋ values from each end
    /// (so it equals the mean when n < 4).
    pub iqm: f64,
}

impl Describe {
    /// Descriptives of a non-empty sample.
    pub fn of(x: &[f64]) -> Describe {
        let s = sorted(x);
        Describe {
            n: x.len(),
            mean: mean(x),
            sd: sd(x),
            median: quantile7(&s, 0.5),
            min: s[0],
            max: s[s.len() - 1],
            iqm: iqm_sorted(&s),
        }
    }
}

/// Arithmetic mean (NaN for no values).
pub fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Sample variance with n − 1 in the denominator (two-pass); NaN when n < 2.
pub fn variance(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return f64::NAN;
    }
    let m = mean(x);
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() - 1) as f64
}

/// Sample standard deviation (n − 1; NaN for fewer than two values).
pub fn sd(x: &[f64]) -> f64 {
    variance(x).sqrt()
}

/// A sorted copy (total order; callers pass finite values).
pub fn sorted(x: &[f64]) -> Vec<f64> {
    let mut s = x.to_vec();
    s.sort_by(f64::total_cmp);
    s
}

/// Quantile of a sorted sample by Hyndman-Fan type 7 (numpy's default, and what rliable's
/// percentile intervals use): h = (n − 1)·q, linear between neighbours.
pub fn quantile7(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 1 {
        return sorted[0];
    }
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Interquartile mean of a sorted sample (see [`Describe::iqm`]).
pub fn iqm_sorted(sorted: &[f64]) -> f64 {
    let cut = sorted.len() / 4;
    mean(&sorted[cut..sorted.len() - cut])
}

/// Interquartile mean of an unsorted sample.
pub fn iqm(x: &[f64]) -> f64 {
    iqm_sorted(&sorted(x))
}

/// Sample skewness, the bias-corrected Fisher-Pearson G1 (scipy `skew(x, bias=False)`); NaN when
/// n < 3 or the sample is constant.
pub fn skewness(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    if x.len() < 3 {
        return f64::NAN;
    }
    let m = mean(x);
    let m2 = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / n;
    let m3 = x.iter().map(|v| (v - m).powi(3)).sum::<f64>() / n;
    if m2 == 0.0 {
        return f64::NAN;
    }
    let g1 = m3 / m2.powf(1.5);
    g1 * (n * (n - 1.0)).sqrt() / (n - 2.0)
}

/// Mid-ranks (1-based; tied values share the average of their ranks), as scipy `rankdata`.
pub fn midranks(x: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..x.len()).collect();
    idx.sort_by(|&i, &j| x[i].total_cmp(&x[j]));
    let mut r = vec![0.0; x.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && x[idx[j + 1]] == x[idx[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            r[k] = rank;
        }
        i = j + 1;
    }
    r
}

/// Sizes of the groups of tied values (only groups larger than one).
pub fn tie_groups(x: &[f64]) -> Vec<usize> {
    let s = sorted(x);
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let mut j = i;
        while j + 1 < s.len() && s[j + 1] == s[i] {
            j += 1;
        }
        if j > i {
            out.push(j - i + 1);
        }
        i = j + 1;
    }
    out
}

/// Median of an unsorted sample.
pub fn median_of(x: &[f64]) -> f64 {
    quantile7(&sorted(x), 0.5)
}
