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
    /// The run's name (its folder or file stem).
    pub name: String,
    /// The file it was read from.
    pub file: PathBuf,
    /// Where in the file (a record, a table row), when the file holds several runs.
    pub place: String,
    /// Its seed, when the run says.
    pub seed: Option<String>,
    /// Its task, when the sweep has several.
    pub task: Option<String>,
    /// "A", "B", or None for runs outside both arms (ignored).
    pub arm: Option<&'static str>,
    /// The arm's label (the group or config value), when the run has one.
    pub label: Option<String>,
    /// The reduced value (the string `"NaN"`, `"inf"` or `"-inf"` in JSON when not finite).
    pub value: f64,
    /// NaN or infinite after reduction: listed, excluded from the statistics.
    pub failed: bool,
    /// The step of the last point read.
    pub last_step: Option<f64>,
    /// Points of the metric read.
    pub points: usize,
}

/// One arm within one task.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ArmStats {
    /// `A` or `B`.
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
    /// What matched the two runs (a seed, or the seed and task).
    pub key: String,
    /// A's value.
    pub a: f64,
    /// B's value.
    pub b: f64,
    /// A − B.
    pub diff: f64,
}

/// The paired analysis.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PairedStats {
    /// What pairs were matched on (`seed`).
    pub key: String,
    /// The matched pairs.
    pub pairs: Vec<PairRow>,
    /// Pairs left out because a run in them failed.
    pub dropped_failed: Vec<String>,
    /// Runs with no partner in the other arm.
    pub unmatched: Vec<String>,
    /// Paired t on the differences (primary).
    pub t: TTest,
    /// Sign-flip permutation test on the differences (exact when small).
    pub sign_flip: PermP,
    /// Wilcoxon signed-rank test, by permutation.
    pub wilcoxon: PermP,
    /// Seeds where A is better / equal / worse (in the metric's direction).
    pub wins: usize,
    /// Seeds where A equals B.
    pub ties: usize,
    /// Seeds where A is worse.
    pub losses: usize,
    /// wins / (wins + losses), with its Clopper-Pearson interval.
    pub prob_a_better: f64,
    /// The Clopper-Pearson interval of `prob_a_better`.
    pub prob_a_better_ci: (f64, f64),
    /// Cohen's d_z: the mean difference over the differences' standard deviation.
    pub d_z: f64,
    /// Δ / |mean(B)|.
    pub relative: f64,
    /// Pearson correlation of A and B across pairs.
    pub pearson_r: f64,
    /// Spearman rank correlation of A and B across pairs.
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
    /// Permutation test of the difference in means.
    pub permutation: PermP,
    /// Mann-Whitney U test of A against B.
    pub mann_whitney: MannWhitney,
    /// P(a run of A is better than a run of B), ties ½.
    pub prob_a_better: f64,
    /// Hedges' g: the standardised difference, corrected for small samples.
    pub hedges_g: f64,
    /// Δ / |mean(B)|.
    pub relative: f64,
}

/// Everything about one task (the whole comparison when there is a single task).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TaskResult {
    /// The task, when the sweep has several.
    pub task: Option<String>,
    /// Arm A's runs and descriptives.
    pub a: ArmStats,
    /// Arm B's runs and descriptives.
    pub b: ArmStats,
    /// Why the design is paired or not.
    pub design: String,
    /// The paired analysis, when runs pair up.
    pub paired: Option<PairedStats>,
    /// The unpaired analysis, when they do not.
    pub unpaired: Option<UnpairedStats>,
    /// Power and the smallest detectable effect at these sample sizes.
    pub power: Option<Power>,
    /// The equivalence test, when a margin was given.
    pub tost: Option<Tost>,
    /// Holm-adjusted primary and exact p-values (multi-task only).
    pub holm_primary_p: Option<f64>,
    /// The same for the robust test.
    pub holm_robust_p: Option<f64>,
    /// What the numbers support.
    pub verdict: Verdict,
    /// What weakens them.
    pub warnings: Vec<Warning>,
}

/// The whole comparison: inputs, numbers, verdict.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Comparison {
    /// The metric compared.
    pub metric: String,
    /// Whether higher or lower is better.
    pub direction: Direction,
    /// How each run's curve became one number.
    pub reduction: Reduction,
    /// The significance level.
    pub alpha: f64,
    /// The confidence level of the intervals (1 − alpha).
    pub level: f64,
    /// How runs were split into the two arms.
    pub arms: Arms,
    /// Files read.
    pub files: usize,
    /// Every run read, in file order.
    pub runs: Vec<RunRow>,
    /// One result per task.
    pub tasks: Vec<TaskResult>,
    /// Multi-task only: IQM and probability of improvement with stratified bootstrap intervals.
    pub aggregates: Option<Aggregates>,
    /// The overall verdict.
    pub verdict: Verdict,
    /// What weakens it, over all tasks.
    pub warnings: Vec<Warning>,
    /// The seed of the resampling (`--seed`).
    pub rng_seed: u64,
    /// Bootstrap resamples drawn.
    pub bootstrap_reps: usize,
}

impl Comparison {
    /// Whether more than one task was compared.
    pub fn multi_task(&self) -> bool {
        self.tasks.len() > 1
    }
}
