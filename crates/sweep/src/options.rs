//! What a comparison is asked (the command line's choices, [`Options`]) and the bounds every
//! part of it holds to: the interval level and the largest metric value the statistics accept.
//! Read by the comparison ([`crate::compare`]), each task's analysis and the design checks.

use crate::pairing::PairBy;
use crate::reduce::Reduction;

/// The largest |metric value| the statistics accept. Variances square the values and Welch's
/// degrees of freedom square a variance, so values near 1e154 overflow f64; past this bound a
/// comparison is refused with the run named instead of giving infinite or NaN statistics.
pub const MAX_MAGNITUDE: f64 = 1e150;

/// Default significance level (two-sided).
pub const DEFAULT_ALPHA: f64 = 0.05;
/// rliable's README default number of bootstrap resamples for aggregate metrics.
pub const DEFAULT_BOOTSTRAP_REPS: usize = 50_000;
/// Confidence of every interval shown (and of the bootstrap).
pub const LEVEL: f64 = 0.95;

/// What the command line decides.
#[derive(Debug, Clone)]
pub struct Options {
    /// The metric to compare (`--metric`), else the one the runs share.
    pub metric: Option<String>,
    /// `--higher-is-better`.
    pub higher_is_better: bool,
    /// `--lower-is-better`.
    pub lower_is_better: bool,
    /// The config key the arms differ in (`--group-by`).
    pub group_by: Option<String>,
    /// Arm A's value (`--a`).
    pub a: Option<String>,
    /// Arm B's value (`--b`).
    pub b: Option<String>,
    /// How runs are paired across arms.
    pub pair_by: PairBy,
    /// How each run's curve becomes one number.
    pub reduce: Reduction,
    /// The significance level.
    pub alpha: f64,
    /// The smallest effect worth detecting (`--mde`), for the power lines.
    pub mde: Option<f64>,
    /// The margin within which the arms count as equivalent (TOST).
    pub equivalence_margin: Option<f64>,
    /// Bootstrap resamples.
    pub bootstrap_reps: usize,
    /// Seeds the resampling (`--seed`).
    pub rng_seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            metric: None,
            higher_is_better: false,
            lower_is_better: false,
            group_by: None,
            a: None,
            b: None,
            pair_by: PairBy::Auto,
            reduce: Reduction::Last,
            alpha: DEFAULT_ALPHA,
            mde: None,
            equivalence_margin: None,
            bootstrap_reps: DEFAULT_BOOTSTRAP_REPS,
            rng_seed: 0,
        }
    }
}
