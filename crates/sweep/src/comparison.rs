//! What a comparison returns: every number and the verdict, per task and overall (the
//! `sweep-compare --json` document and what every renderer draws).

use crate::arms::{Arms, Direction};
use crate::power::Power;
use crate::reduce::Reduction;
use crate::stats::bootstrap::Aggregates;
use crate::stats::describe::Describe;
use crate::stats::mannwhitney::MannWhitney;
use crate::stats::ttest::TTest;
use crate::stats::PermP;
use crate::verdict::{Tost, Verdict};
use crate::warnings::Warning;
use std::path::PathBuf;

/// One run as it entered the comparison.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunRow {
    pub name: String,
    pub file: PathBuf,
    pub place: String,
    pub seed: Option<String>,
    pub task: Option<String>,
    /// "A", "B", or None for runs outside both arms (ignored).
    pub arm: Option<&'static str>,
    /// The arm's label (the group or config value), when the run has one.
    pub label: Option<String>,
    /// The reduced value (null in JSON when NaN or infinite).
    pub value: f64,
    /// NaN or infinite after reduction: listed, excluded from the statistics.
    pub failed: bool,
    pub last_step: Option<f64>,
    pub points: usize,
}

/// One arm within one task.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ArmStats {
    pub name: String,
    /// Descriptives of the usable runs (None when there are none).
    pub describe: Option<Describe>,
    /// Usable runs as (run name, seed, value), in seed order when seeds exist.
    pub values: Vec<(String, Option<String>, f64)>,
    /// Runs whose value was NaN or infinite.
    pub failed: Vec<String>,
}

/// One matched pair.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PairRow {
    pub key: String,
    pub a: f64,
    pub b: f64,
    pub diff: f64,
}

/// The paired analysis.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PairedStats {
    pub key: String,
    pub pairs: Vec<PairRow>,
    /// Pairs left out because a run in them failed.
    pub dropped_failed: Vec<String>,
    pub unmatched: Vec<String>,
    /// Paired t on the differences (primary).
    pub t: TTest,
    pub sign_flip: PermP,
    pub wilcoxon: PermP,
    /// Seeds where A is better / equal / worse (in the metric's direction).
    pub wins: usize,
    pub ties: usize,
    pub losses: usize,
    /// wins / (wins + losses), with its Clopper-Pearson interval.
    pub prob_a_better: f64,
    pub prob_a_better_ci: (f64, f64),
    pub d_z: f64,
    /// Δ / |mean(B)|.
    pub relative: f64,
    pub pearson_r: f64,
    pub spearman_rho: f64,
    /// Var(d) / (Var(A) + Var(B)), about 1 − r: what pairing leaves of the variance.
    pub variance_ratio: f64,
    /// n / (1 − r) when 0 < r < 1: the unpaired seeds per arm this pairing is worth, roughly.
    pub effective_seeds: Option<f64>,
    /// Welch on the same values, ignoring the pairing (for comparison).
    pub welch: TTest,
}

/// The unpaired analysis.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct UnpairedStats {
    /// Welch t (primary).
    pub welch: TTest,
    pub permutation: PermP,
    pub mann_whitney: MannWhitney,
    /// P(a run of A is better than a run of B), ties ½.
    pub prob_a_better: f64,
    pub hedges_g: f64,
    pub relative: f64,
}

/// Everything about one task (the whole comparison when there is a single task).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TaskResult {
    pub task: Option<String>,
    pub a: ArmStats,
    pub b: ArmStats,
    /// Why the design is paired or not.
    pub design: String,
    pub paired: Option<PairedStats>,
    pub unpaired: Option<UnpairedStats>,
    pub power: Option<Power>,
    pub tost: Option<Tost>,
    /// Holm-adjusted primary and exact p-values (multi-task only).
    pub holm_primary_p: Option<f64>,
    pub holm_robust_p: Option<f64>,
    pub verdict: Verdict,
    pub warnings: Vec<Warning>,
}

/// The whole comparison: inputs, numbers, verdict.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Comparison {
    pub metric: String,
    pub direction: Direction,
    pub reduction: Reduction,
    pub alpha: f64,
    pub level: f64,
    pub arms: Arms,
    pub files: usize,
    pub runs: Vec<RunRow>,
    pub tasks: Vec<TaskResult>,
    /// Multi-task only: IQM and probability of improvement with stratified bootstrap intervals.
    pub aggregates: Option<Aggregates>,
    pub verdict: Verdict,
    pub warnings: Vec<Warning>,
    pub rng_seed: u64,
    pub bootstrap_reps: usize,
}

impl Comparison {
    /// Whether more than one task was compared.
    pub fn multi_task(&self) -> bool {
        self.tasks.len() > 1
    }
}
