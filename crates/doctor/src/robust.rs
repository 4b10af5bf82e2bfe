//! Robust smoothing: medians, not means, so one bad batch neither hides a trend nor becomes one.
//!
//! A [`Trend`] is a curve's finite points reduced to at most [`MAX_TREND_POINTS`] bins (each the
//! median of its points), then a running median over the bins. A running median keeps a step
//! change where it happens (a mean would smear it over its window) and ignores an isolated
//! outlier entirely, which is what a detector needs: a spike is a departure from the trend, a
//! divergence is a change of the trend. The noise scale is the median absolute deviation of the
//! points from the trend, measured per stretch of the run because a loss is noisier early on.

/// Curves longer than this are binned first: 2,048 bins resolve a step to 0.05% of the run,
/// finer than any logging interval a person reads a curve at, and keep the running median cheap
/// on a 1,000,000-step history.
pub const MAX_TREND_POINTS: usize = 2048;

/// The running median spans this share of the (binned) curve on each side: 2% smooths the
/// batch-to-batch noise of a per-step loss yet follows the fall of an early epoch.
const SMOOTH_SHARE: f64 = 0.02;

/// The running median's half-width is at least this many points: a 3-point median removes an
/// isolated spike but follows the noise so closely that the noise measured around it is too
/// small; 7 points measure it (checked on the 60-point printed logs of the test corpus).
const MIN_HALF_WINDOW: usize = 3;
/// Wider windows cost time and would smooth away a stretch of 100 bad steps.
const MAX_HALF_WINDOW: usize = 40;

/// The noise scale is measured over stretches of this many points (fewer make the MAD jumpy).
const NOISE_STRETCH: usize = 32;

/// The noise scale is at least this share of the level: logs print 4 or 5 significant digits,
/// so a flat stretch shows no noise at all, and a z-score against zero noise means nothing.
const NOISE_FLOOR_REL: f64 = 1e-3;

/// The print resolution is estimated from this many values spread over the curve (enough to
/// see every digit a log prints, few enough to sort at once on a million-point history).
const QUANTUM_SAMPLE: usize = 4096;

/// Scale factor that makes the MAD estimate a normal distribution's standard deviation.
pub const MAD_TO_SIGMA: f64 = 1.4826;

/// The median of `v` (reordered in place); NaN for an empty slice. `v` must be free of NaN.
pub fn median_in_place(v: &mut [f64]) -> f64 {
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    let (_, hi, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    let hi = *hi;
    if n % 2 == 1 {
        return hi;
    }
    let lo = v[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo + hi) / 2.0
}

/// The median of the finite values of an iterator; NaN when there are none.
pub fn median<I: IntoIterator<Item = f64>>(values: I) -> f64 {
    let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
    median_in_place(&mut v)
}

/// The median absolute deviation from `center`, scaled to a standard deviation.
pub fn mad_sigma(values: &[f64], center: f64) -> f64 {
    let mut d: Vec<f64> = values
        .iter()
        .filter(|x| x.is_finite())
        .map(|x| (x - center).abs())
        .collect();
    MAD_TO_SIGMA * median_in_place(&mut d)
}

/// A curve's robust trend: see the module docs.
#[derive(Debug, Clone)]
pub struct Trend {
    /// The step of each bin (the median step of its points).
    pub steps: Vec<f64>,
    /// The running median of the bins' medians.
    pub level: Vec<f64>,
    /// For each finite input point, its bin.
    pub bin_of: Vec<usize>,
    /// The finite input points, in order.
    pub points: Vec<(f64, f64)>,
    /// Per bin, the noise scale (MAD of the points from the trend, as a standard deviation) of
    /// the stretch the bin is in.
    pub noise: Vec<f64>,
}

impl Trend {
    /// The trend of the finite points of `points`; `None` when fewer than `min_points` are finite.
    pub fn of(points: &[(f64, f64)], min_points: usize) -> Option<Trend> {
        let finite: Vec<(f64, f64)> = points
            .iter()
            .copied()
            .filter(|(s, v)| s.is_finite() && v.is_finite())
            .collect();
        if finite.len() < min_points.max(1) {
            return None;
        }
        let n = finite.len();
        let bins = n.min(MAX_TREND_POINTS);
        let mut steps = Vec::with_capacity(bins);
        let mut medians = Vec::with_capacity(bins);
        let mut bin_of = Vec::with_capacity(n);
        let mut scratch = Vec::new();
        for b in 0..bins {
            let (lo, hi) = (b * n / bins, ((b + 1) * n / bins).max(b * n / bins + 1));
            scratch.clear();
            scratch.extend(finite[lo..hi].iter().map(|p| p.1));
            medians.push(median_in_place(&mut scratch));
            steps.push(finite[(lo + hi - 1) / 2].0);
            bin_of.extend(std::iter::repeat_n(b, hi - lo));
        }
        let level = running_median(&medians, half_window(bins));
        let noise = stretch_noise(&finite, &bin_of, &level, quantum(&finite));
        Some(Trend {
            steps,
            level,
            bin_of,
            points: finite,
            noise,
        })
    }

    /// The number of bins.
    pub fn len(&self) -> usize {
        self.level.len()
    }

    /// Whether the trend has no bins (never true for a built trend).
    pub fn is_empty(&self) -> bool {
        self.level.is_empty()
    }

    /// The trend at the point with this index (in [`Trend::points`]).
    pub fn level_at_point(&self, i: usize) -> f64 {
        self.level[self.bin_of[i]]
    }

    /// The noise scale at the point with this index.
    pub fn noise_at_point(&self, i: usize) -> f64 {
        self.noise[self.bin_of[i]]
    }

    /// The median of the raw values of the first `share` of the points (at least `min` points).
    pub fn head(&self, share: f64, min: usize) -> f64 {
        let k = ((self.points.len() as f64 * share) as usize)
            .max(min)
            .min(self.points.len());
        median(self.points[..k].iter().map(|p| p.1))
    }

    /// The median of the raw values of the last `share` of the points (at least `min` points).
    pub fn tail(&self, share: f64, min: usize) -> f64 {
        let n = self.points.len();
        let k = ((n as f64 * share) as usize).max(min).min(n);
        median(self.points[n - k..].iter().map(|p| p.1))
    }

    /// The index of the trend's minimum (the first, if several bins share it).
    pub fn argmin(&self) -> usize {
        let mut best = 0;
        for (i, v) in self.level.iter().enumerate() {
            if *v < self.level[best] {
                best = i;
            }
        }
        best
    }

    /// The trend's level at the bin nearest to `step` from below (the first bin before it starts).
    pub fn level_at_step(&self, step: f64) -> f64 {
        let i = self.steps.partition_point(|s| *s <= step).saturating_sub(1);
        self.level[i]
    }
}

/// The running median's half-width for a curve of `n` points.
fn half_window(n: usize) -> usize {
    ((n as f64 * SMOOTH_SHARE).round() as usize).clamp(MIN_HALF_WINDOW, MAX_HALF_WINDOW)
}

/// The median of each point's window of `h` points on each side (narrower at the ends).
pub fn running_median(v: &[f64], h: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(v.len());
    let mut scratch = Vec::with_capacity(2 * h + 1);
    for i in 0..v.len() {
        let lo = i.saturating_sub(h);
        let hi = (i + h + 1).min(v.len());
        scratch.clear();
        scratch.extend_from_slice(&v[lo..hi]);
        out.push(median_in_place(&mut scratch));
    }
    out
}

/// Per bin, the noise of the stretch of [`NOISE_STRETCH`] points around it: the MAD of the
/// points' departures from the trend. A floor of a tenth of the whole curve's noise keeps a
/// perfectly flat stretch from turning every later wobble into a spike.
fn stretch_noise(points: &[(f64, f64)], bin_of: &[usize], level: &[f64], quantum: f64) -> Vec<f64> {
    let resid: Vec<f64> = points
        .iter()
        .zip(bin_of)
        .map(|(p, &b)| p.1 - level[b])
        .collect();
    let global = mad_sigma(&resid, 0.0);
    let n = resid.len();
    let stretches = n.div_ceil(NOISE_STRETCH).max(1);
    let per_stretch: Vec<f64> = (0..stretches)
        .map(|k| {
            let lo = (k * NOISE_STRETCH).min(n.saturating_sub(NOISE_STRETCH));
            let hi = (lo + NOISE_STRETCH).min(n);
            mad_sigma(&resid[lo..hi], 0.0).max(global * 0.1)
        })
        .collect();
    let mut noise = vec![f64::NAN; level.len()];
    for (i, &b) in bin_of.iter().enumerate() {
        if noise[b].is_nan() {
            noise[b] = per_stretch[i / NOISE_STRETCH]
                .max(NOISE_FLOOR_REL * level[b].abs())
                .max(quantum);
        }
    }
    noise
}

/// The print resolution of a curve: the smallest gap between two distinct values (a log that
/// prints 4 decimals has 1e-4). A change of one printed digit is never a signal.
fn quantum(points: &[(f64, f64)]) -> f64 {
    let stride = points.len().div_ceil(QUANTUM_SAMPLE).max(1);
    let mut v: Vec<f64> = points.iter().step_by(stride).map(|p| p.1).collect();
    v.sort_by(f64::total_cmp);
    let q = v
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min);
    if q.is_finite() {
        q
    } else {
        0.0
    }
}

/// The median spacing of successive steps: the logging interval. NaN for fewer than 2 points.
pub fn logging_interval(points: &[(f64, f64)]) -> f64 {
    let gaps: Vec<f64> = points
        .windows(2)
        .map(|w| w[1].0 - w[0].0)
        .filter(|g| *g > 0.0 && g.is_finite())
        .collect();
    median(gaps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median([3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median([4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median([]).is_nan());
        assert_eq!(median([f64::NAN, 1.0]), 1.0);
    }

    #[test]
    fn a_running_median_ignores_a_spike_and_keeps_a_step_edge() {
        let mut v = vec![1.0; 20];
        v[5] = 100.0;
        for x in v.iter_mut().skip(12) {
            *x = 5.0;
        }
        let m = running_median(&v, 2);
        assert_eq!(m[5], 1.0);
        assert_eq!(m[11], 1.0);
        assert_eq!(m[12], 5.0);
    }

    #[test]
    fn long_curves_are_binned_and_keep_their_shape() {
        let pts: Vec<(f64, f64)> = (0..100_000)
            .map(|i| (i as f64, 10.0 - i as f64 / 10_000.0))
            .collect();
        let t = Trend::of(&pts, 8).unwrap();
        assert_eq!(t.len(), MAX_TREND_POINTS);
        assert!((t.level[0] - 10.0).abs() < 0.1);
        // At the end the window is one-sided, so it lags by half a window (1% of the run here).
        assert!((t.level[t.len() - 1] - 0.0).abs() < 0.15);
        assert_eq!(t.argmin(), t.len() - 1);
    }

    #[test]
    fn noise_is_measured_where_it_is() {
        // Quiet first half, noisy second half (a fixed pseudo-random sequence).
        let mut state = 12345u64;
        let pts: Vec<(f64, f64)> = (0..400)
            .map(|i| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let wiggle = (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                (i as f64, if i < 200 { 0.01 * wiggle } else { wiggle })
            })
            .collect();
        let t = Trend::of(&pts, 8).unwrap();
        assert!(t.noise_at_point(10) < 0.02, "{}", t.noise_at_point(10));
        assert!(t.noise_at_point(390) > 0.1, "{}", t.noise_at_point(390));
    }

    #[test]
    fn the_print_resolution_is_the_smallest_gap() {
        let pts = [(0.0, 0.0001), (1.0, 0.0002), (2.0, 0.0001), (3.0, 0.0004)];
        assert!((quantum(&pts) - 0.0001).abs() < 1e-12);
        assert_eq!(quantum(&[(0.0, 1.0), (1.0, 1.0)]), 0.0);
    }

    #[test]
    fn the_logging_interval_is_the_usual_gap() {
        let pts = [
            (0.0, 1.0),
            (10.0, 1.0),
            (20.0, 1.0),
            (35.0, 1.0),
            (40.0, 1.0),
        ];
        assert_eq!(logging_interval(&pts), 10.0);
    }
}
