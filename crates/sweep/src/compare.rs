//! The comparison itself: runs in, every number and the verdict out, no I/O.
//!
//! Flow: choose the metric and its direction → reduce every run → assign arms → split by task →
//! per task: descriptives, pairing, tests, power, verdict, warnings → across tasks: Holm and the
//! stratified-bootstrap aggregates → the overall verdict.
//!
//! Departures from the design notes (reference §9), on purpose:
//! - Wins / ties / losses count "better", not ">", so they follow the metric's direction;
//!   P(A_i better) and its Clopper-Pearson interval are over decided pairs (ties set aside, as the
//!   sign test does).
//! - Multi-task verdicts: each task gets the §9.3 rules with Holm-adjusted p-values (primary and
//!   exact families adjusted separately); the overall verdict is A BETTER when at least one task
//!   is and none leans to B (mirror for B), INCONCLUSIVE when tasks disagree. The bootstrap
//!   aggregates are reported, never voted on: percentile intervals under-cover at few seeds.
//! - One `--bootstrap-reps` (default 50,000) serves both IQM and probability of improvement.
//! - No score normalisation across tasks (`--normalize` is not offered): IQM over tasks is only
//!   meaningful when tasks share a scale, and the report says so.
//! - A pair whose two runs log bit-identical histories of the metric is an integrity failure
//!   (the same run twice); equal reduced values alone are only a warning.

use crate::arms::{self, Arms, Direction};
use crate::duplicates;
use crate::numbers::{num, signed};
use crate::pairing::{self, PairBy, Pairing};
use crate::power::{self, Power};
use crate::record::RunRecord;
use crate::reduce::{self, Reduced, Reduction};
use crate::stats::binomial::clopper_pearson;
use crate::stats::bootstrap::{self, Aggregates, TaskScores};
use crate::stats::correlation::{pearson, spearman};
use crate::stats::describe::{skewness, variance, Describe};
use crate::stats::effect::{d_z, hedges_g};
use crate::stats::holm::holm;
use crate::stats::mannwhitney::{mann_whitney, MannWhitney};
use crate::stats::permutation::two_sample;
use crate::stats::rng::Rng;
use crate::stats::signflip::sign_flip;
use crate::stats::ttest::{one_sample, welch, TTest};
use crate::stats::wilcoxon::signed_rank;
use crate::stats::PermP;
use crate::verdict::{self, Evidence, Tost, Verdict, VerdictKind};
use crate::warnings::{self, Warning};
use crate::Result;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The largest |metric value| the statistics accept. Variances square the values and Welch's
/// degrees of freedom square a variance, so values near 1e154 overflow f64; past this bound a
/// comparison is refused with the run named instead of giving infinite or NaN statistics.
pub const MAX_MAGNITUDE: f64 = 1e150;

/// Version of the JSON this module serializes.
pub const SCHEMA_VERSION: u32 = 1;
/// Default significance level (two-sided).
pub const DEFAULT_ALPHA: f64 = 0.05;
/// rliable's README default number of bootstrap resamples for aggregate metrics.
pub const DEFAULT_BOOTSTRAP_REPS: usize = 50_000;
/// Confidence of every interval shown (and of the bootstrap).
pub const LEVEL: f64 = 0.95;

/// What the command line decides.
#[derive(Debug, Clone)]
pub struct Options {
    pub metric: Option<String>,
    pub higher_is_better: bool,
    pub lower_is_better: bool,
    pub group_by: Option<String>,
    pub a: Option<String>,
    pub b: Option<String>,
    pub pair_by: PairBy,
    pub reduce: Reduction,
    pub alpha: f64,
    pub mde: Option<f64>,
    pub equivalence_margin: Option<f64>,
    pub bootstrap_reps: usize,
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
    pub schema_version: u32,
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

struct Run<'a> {
    rec: &'a RunRecord,
    red: Reduced,
}

impl Run<'_> {
    fn ok(&self) -> bool {
        self.red.value.is_finite()
    }
}

/// Compare arm A against arm B over `records`.
pub fn compare(records: &[RunRecord], opts: &Options) -> Result<Comparison> {
    if records.is_empty() {
        return Err(crate::Error::usage("no runs found in the given paths"));
    }
    let arms = arms::choose(
        records,
        opts.group_by.as_deref(),
        opts.a.as_deref(),
        opts.b.as_deref(),
    )?;
    let in_arm = |r: &RunRecord| -> Option<&'static str> {
        match arms::arm_of(r, &arms.key) {
            Some(v) if v == arms.a => Some("A"),
            Some(v) if v == arms.b => Some("B"),
            _ => None,
        }
    };
    let (repeats, repeat_warning) = duplicates::find(records);
    let once = || {
        records
            .iter()
            .enumerate()
            .filter(|(i, _)| !repeats.contains(i))
            .map(|(_, r)| r)
    };
    let selected: Vec<&RunRecord> = once().filter(|r| in_arm(r).is_some()).collect();
    let metric = arms::choose_metric(&selected, opts.metric.as_deref())?;
    let direction = arms::direction(&metric, opts.higher_is_better, opts.lower_is_better);
    let hib = direction.higher_is_better;

    if let PairBy::Key(k) = &opts.pair_by {
        if let Some(r) = selected.iter().find(|r| pairing::key_value(r, k).is_none()) {
            return Err(crate::Error::input(
                &r.source,
                reduce::place(r),
                format!("--pair-by {k}: this run has no `{k}` (neither a seed nor a config key)"),
            ));
        }
    }
    let mut runs: Vec<Run> = Vec::with_capacity(selected.len());
    for r in &selected {
        runs.push(Run {
            rec: r,
            red: reduce::reduce(r, &metric, opts.reduce, hib)?,
        });
    }
    let mut rows: Vec<RunRow> = once()
        .filter(|r| in_arm(r).is_none())
        .map(|r| RunRow {
            name: r.name.clone(),
            file: r.source.clone(),
            place: r.place.clone(),
            seed: r.seed.clone(),
            task: r.task.clone(),
            arm: None,
            label: arms::arm_of(r, &arms.key),
            value: f64::NAN,
            failed: false,
            last_step: None,
            points: 0,
        })
        .collect();
    rows.splice(
        0..0,
        runs.iter().map(|r| RunRow {
            name: r.rec.name.clone(),
            file: r.rec.source.clone(),
            place: r.rec.place.clone(),
            seed: r.rec.seed.clone(),
            task: r.rec.task.clone(),
            arm: in_arm(r.rec),
            label: arms::arm_of(r.rec, &arms.key),
            value: r.red.value,
            failed: !r.ok(),
            last_step: r.red.last_step,
            points: r.red.points,
        }),
    );

    // Split by task.
    let task_names: BTreeSet<Option<String>> = runs.iter().map(|r| r.rec.task.clone()).collect();
    let multi = task_names.len() > 1;
    let mut tasks = Vec::new();
    let mut rng = Rng::seeded(opts.rng_seed);
    for t in &task_names {
        let mine = |arm: &str| -> Vec<&Run> {
            runs.iter()
                .filter(|r| &r.rec.task == t && in_arm(r.rec) == Some(arm))
                .collect()
        };
        tasks.push(analyse_task(
            if multi {
                Some(t.clone().unwrap_or_else(|| "(none)".into()))
            } else {
                t.clone()
            },
            &mine("A"),
            &mine("B"),
            &arms,
            hib,
            opts,
            &mut rng,
        ));
    }

    let mut global: Vec<Warning> = repeat_warning.into_iter().collect();
    let aggregates = if multi {
        holm_adjust(&mut tasks, hib, opts);
        global.push(Warning::new(
            "multiple-comparisons",
            format!(
                "{} tasks compared: per-task p-values are Holm-adjusted, and each task's verdict \
                 uses the adjusted values.",
                tasks.len()
            ),
        ));
        let scores: Vec<TaskScores> = tasks
            .iter()
            .filter(|t| !t.a.values.is_empty() && !t.b.values.is_empty())
            .map(|t| TaskScores {
                a: t.a.values.iter().map(|v| v.2).collect(),
                b: t.b.values.iter().map(|v| v.2).collect(),
            })
            .collect();
        (scores.len() >= 2).then(|| {
            bootstrap::stratified(
                &scores,
                hib,
                opts.bootstrap_reps.max(1),
                opts.rng_seed,
                LEVEL,
            )
        })
    } else {
        None
    };

    global.extend(design_warnings(&runs, &arms, opts, multi));
    let verdict = if multi {
        overall_verdict(&tasks)
    } else {
        tasks[0].verdict.clone()
    };
    let files: BTreeSet<&PathBuf> = records.iter().map(|r| &r.source).collect();
    Ok(Comparison {
        schema_version: SCHEMA_VERSION,
        metric,
        direction,
        reduction: opts.reduce,
        alpha: opts.alpha,
        level: LEVEL,
        arms,
        files: files.len(),
        runs: rows,
        tasks,
        aggregates,
        verdict,
        warnings: global,
        rng_seed: opts.rng_seed,
        bootstrap_reps: opts.bootstrap_reps,
    })
}

fn arm_stats(name: &str, runs: &[&Run]) -> ArmStats {
    let mut usable: Vec<(String, Option<String>, f64)> = runs
        .iter()
        .filter(|r| r.ok())
        .map(|r| (r.rec.name.clone(), r.rec.seed.clone(), r.red.value))
        .collect();
    usable.sort_by(|x, y| seed_order(&x.1, &y.1).then_with(|| x.0.cmp(&y.0)));
    let values: Vec<f64> = usable.iter().map(|v| v.2).collect();
    ArmStats {
        name: name.to_string(),
        describe: (!values.is_empty()).then(|| Describe::of(&values)),
        values: usable,
        failed: runs
            .iter()
            .filter(|r| !r.ok())
            .map(|r| r.rec.name.clone())
            .collect(),
    }
}

/// The refusal for values so large that the squared sums behind every test overflow.
fn too_large(a: &ArmStats, b: &ArmStats) -> Option<Verdict> {
    let (run, value) = a
        .values
        .iter()
        .chain(&b.values)
        .map(|(name, _, v)| (name, *v))
        .max_by(|x, y| x.1.abs().total_cmp(&y.1.abs()))?;
    (value.abs() > MAX_MAGNITUDE).then(|| Verdict::refuse_magnitude(run, value, MAX_MAGNITUDE))
}

/// Seeds sort numerically when they are numbers.
fn seed_order(a: &Option<String>, b: &Option<String>) -> std::cmp::Ordering {
    match (a, b) {
        (Some(x), Some(y)) => match (x.parse::<f64>(), y.parse::<f64>()) {
            (Ok(p), Ok(q)) => p.total_cmp(&q),
            _ => x.cmp(y),
        },
        _ => a.cmp(b),
    }
}

fn analyse_task(
    task: Option<String>,
    a_runs: &[&Run],
    b_runs: &[&Run],
    arms: &Arms,
    hib: bool,
    opts: &Options,
    rng: &mut Rng,
) -> TaskResult {
    let a = arm_stats(&arms.a, a_runs);
    let b = arm_stats(&arms.b, b_runs);
    let mut warnings = Vec::new();
    for (label, s) in [("A", &a), ("B", &b)] {
        if !s.failed.is_empty() {
            warnings.push(Warning::new(
                "failed-runs",
                format!(
                    "{} of {} runs in {label} ({}) ended NaN/inf and are left out: {}",
                    s.failed.len(),
                    s.failed.len() + s.values.len(),
                    s.name,
                    s.failed.join(", ")
                ),
            ));
        }
    }
    let refused = [("A", &a), ("B", &b)]
        .into_iter()
        .find(|(_, s)| s.values.len() < 2)
        .map(|(label, s)| Verdict::refuse(label, &s.name, s.values.len(), s.failed.len()))
        .or_else(|| too_large(&a, &b));
    if let Some(verdict) = refused {
        return TaskResult {
            task,
            design: "not analysed".into(),
            verdict,
            a,
            b,
            paired: None,
            unpaired: None,
            power: None,
            tost: None,
            holm_primary_p: None,
            holm_robust_p: None,
            warnings,
        };
    }

    let a_recs: Vec<&RunRecord> = a_runs.iter().map(|r| r.rec).collect();
    let b_recs: Vec<&RunRecord> = b_runs.iter().map(|r| r.rec).collect();
    let pairing = pairing::decide(&a_recs, &b_recs, &opts.pair_by);
    if pairing.duplicate {
        warnings.push(Warning::new("duplicate-seed", pairing.why.clone()));
    }
    let av: Vec<f64> = a.values.iter().map(|v| v.2).collect();
    let bv: Vec<f64> = b.values.iter().map(|v| v.2).collect();
    let mut design = pairing.why.clone();
    let paired = build_paired(&pairing, a_runs, b_runs, hib);
    let paired = match paired {
        Some(p) if p.pairs.len() >= 2 => Some(p),
        Some(p) => {
            design = format!(
                "{design}, but only {} complete pair(s) after failures: analysed unpaired",
                p.pairs.len()
            );
            None
        }
        None => None,
    };
    let sign = if hib { 1.0 } else { -1.0 };
    let mut integrity = Vec::new();

    let (evidence_parts, power, tost, unpaired) = if let Some(p) = &paired {
        let d: Vec<f64> = p.pairs.iter().map(|x| x.diff).collect();
        let pa: Vec<f64> = p.pairs.iter().map(|x| x.a).collect();
        let pb: Vec<f64> = p.pairs.iter().map(|x| x.b).collect();
        let identical = bit_identical(&pairing, a_runs, b_runs);
        if !identical.is_empty() {
            integrity.push(format!(
                "{} pair(s) log bit-identical histories ({}) — the method flag may not be applied",
                identical.len(),
                identical.join(", ")
            ));
        }
        let same_value = p.pairs.iter().filter(|x| x.diff == 0.0).count();
        if same_value > 0 && identical.is_empty() {
            warnings.push(Warning::new(
                "identical-pairs",
                format!("{same_value} pair(s) have exactly equal values in A and B; check that the method flag was applied"),
            ));
        }
        if p.pearson_r <= 0.0 {
            warnings.push(Warning::new(
                "pairing-ineffective",
                format!(
                    "pairs are not positively correlated (r = {}): the shared seed does not seem to \
                     control the randomness (nondeterministic kernels, or a seed not plumbed \
                     through); pairing costs degrees of freedom here.",
                    num(p.pearson_r)
                ),
            ));
        }
        if d.len() >= warnings::SKEW_MIN_N && skewness(&d).abs() > warnings::SKEW_LIMIT {
            warnings.push(Warning::new(
                "normality",
                format!(
                    "the differences are skewed (skewness {}): lean on the exact tests rather than the t interval.",
                    num(skewness(&d))
                ),
            ));
        }
        let pw = power::paired(
            variance(&d).sqrt(),
            d.len(),
            p.t.estimate,
            opts.mde,
            opts.alpha,
        );
        let tost = opts.equivalence_margin.map(|m| {
            let ci90 = one_sample(&d, 0.90).ci;
            Tost {
                margin: m,
                ci90,
                equivalent: ci90.0 > -m && ci90.1 < m,
            }
        });
        let _ = (&pa, &pb);
        (
            (
                p.t,
                p.sign_flip,
                p.prob_a_better,
                Some((p.wins, p.losses)),
                Some(p.welch.p),
                "paired t-test",
                "exact sign-flip test",
            ),
            pw,
            tost,
            None,
        )
    } else {
        let w = welch(&av, &bv, LEVEL);
        let perm = two_sample(&av, &bv, rng);
        let mw = mann_whitney(&av, &bv);
        let prob = if hib {
            mw.prob_a_greater
        } else {
            1.0 - mw.prob_a_greater
        };
        let mb = b.describe.as_ref().map(|d| d.mean).unwrap_or(f64::NAN);
        for (label, v) in [("A", &av), ("B", &bv)] {
            if v.len() >= warnings::SKEW_MIN_N && skewness(v).abs() > warnings::SKEW_LIMIT {
                warnings.push(Warning::new(
                    "normality",
                    format!(
                        "arm {label} is skewed (skewness {}): lean on the exact tests.",
                        num(skewness(v))
                    ),
                ));
            }
        }
        let pw = power::unpaired(
            (variance(&av).sqrt(), av.len()),
            (variance(&bv).sqrt(), bv.len()),
            w.estimate,
            opts.mde,
            opts.alpha,
        );
        let tost = opts.equivalence_margin.map(|m| {
            let ci90 = welch(&av, &bv, 0.90).ci;
            Tost {
                margin: m,
                ci90,
                equivalent: ci90.0 > -m && ci90.1 < m,
            }
        });
        let u = UnpairedStats {
            welch: w,
            permutation: perm,
            mann_whitney: mw,
            prob_a_better: prob,
            hedges_g: hedges_g(&av, &bv),
            relative: w.estimate / mb.abs(),
        };
        (
            (
                w,
                perm,
                prob,
                None,
                None,
                "Welch t-test",
                "exact permutation test",
            ),
            pw,
            tost,
            Some(u),
        )
    };
    let (primary, robust, prob, wins, ignoring, primary_name, robust_name) = evidence_parts;

    // Seed lottery, oriented so larger is better.
    let oa: Vec<f64> = av.iter().map(|x| x * sign).collect();
    let ob: Vec<f64> = bv.iter().map(|x| x * sign).collect();
    let lottery = if primary.estimate * sign >= 0.0 {
        warnings::seed_lottery(
            (&format!("A ({})", arms.a), &oa),
            (&format!("B ({})", arms.b), &ob),
        )
    } else {
        warnings::seed_lottery(
            (&format!("B ({})", arms.b), &ob),
            (&format!("A ({})", arms.a), &oa),
        )
    };
    warnings.extend(lottery);

    let n = paired
        .as_ref()
        .map(|p| p.pairs.len())
        .unwrap_or(av.len().min(bv.len()));
    let evidence = Evidence {
        higher_is_better: hib,
        alpha: opts.alpha,
        paired: paired.is_some(),
        n,
        delta: primary.estimate,
        ci: primary.ci,
        primary: primary_name,
        primary_p: primary.p,
        robust: robust_name,
        robust_p: robust.p,
        robust_min: robust.min_attainable,
        prob_a_better: prob,
        wins,
        mde: power.mde,
        seeds_for_observed: power.seeds_for_observed,
        tost,
        integrity: &integrity,
        ignoring_pairing_p: ignoring,
        adjusted: "",
    };
    let verdict = verdict::decide(&evidence);
    for i in &integrity {
        warnings.push(Warning::new("integrity", i.clone()));
    }
    TaskResult {
        task,
        a,
        b,
        design,
        paired,
        unpaired,
        power: Some(power),
        tost,
        holm_primary_p: None,
        holm_robust_p: None,
        verdict,
        warnings,
    }
}

fn build_paired(
    pairing: &Pairing,
    a_runs: &[&Run],
    b_runs: &[&Run],
    hib: bool,
) -> Option<PairedStats> {
    let key = pairing.key.clone()?;
    let mut pairs = Vec::new();
    let mut dropped_failed = Vec::new();
    for (i, j, k) in &pairing.pairs {
        let (ra, rb) = (a_runs[*i], b_runs[*j]);
        if ra.ok() && rb.ok() {
            pairs.push(PairRow {
                key: k.clone(),
                a: ra.red.value,
                b: rb.red.value,
                diff: ra.red.value - rb.red.value,
            });
        } else {
            dropped_failed.push(k.clone());
        }
    }
    pairs.sort_by(|x, y| seed_order(&Some(x.key.clone()), &Some(y.key.clone())));
    let n = pairs.len();
    let d: Vec<f64> = pairs.iter().map(|p| p.diff).collect();
    let pa: Vec<f64> = pairs.iter().map(|p| p.a).collect();
    let pb: Vec<f64> = pairs.iter().map(|p| p.b).collect();
    let sign = if hib { 1.0 } else { -1.0 };
    let wins = d.iter().filter(|x| **x * sign > 0.0).count();
    let losses = d.iter().filter(|x| **x * sign < 0.0).count();
    let ties = n - wins - losses;
    if n < 2 {
        return Some(PairedStats {
            key,
            pairs,
            dropped_failed,
            unmatched: pairing.unmatched.clone(),
            t: one_sample(&[0.0, 0.0], LEVEL),
            sign_flip: signed_rank(&[]),
            wilcoxon: signed_rank(&[]),
            wins,
            ties,
            losses,
            prob_a_better: f64::NAN,
            prob_a_better_ci: (0.0, 1.0),
            d_z: f64::NAN,
            relative: f64::NAN,
            pearson_r: f64::NAN,
            spearman_rho: f64::NAN,
            variance_ratio: f64::NAN,
            effective_seeds: None,
            welch: one_sample(&[0.0, 0.0], LEVEL),
        });
    }
    let t = one_sample(&d, LEVEL);
    let r = pearson(&pa, &pb);
    let decided = (wins + losses) as u64;
    let mean_b = pb.iter().sum::<f64>() / n as f64;
    // A generator local to the pair analysis keeps the sign-flip draws (n > 30 only) independent
    // of how many tasks came before.
    let mut rng = Rng::seeded(n as u64);
    Some(PairedStats {
        key,
        dropped_failed,
        unmatched: pairing.unmatched.clone(),
        t,
        sign_flip: sign_flip(&d, &mut rng),
        wilcoxon: signed_rank(&d),
        wins,
        ties,
        losses,
        prob_a_better: if decided > 0 {
            wins as f64 / decided as f64
        } else {
            0.5
        },
        prob_a_better_ci: clopper_pearson(wins as u64, decided, LEVEL),
        d_z: d_z(&d),
        relative: t.estimate / mean_b.abs(),
        pearson_r: r,
        spearman_rho: spearman(&pa, &pb),
        variance_ratio: variance(&d) / (variance(&pa) + variance(&pb)),
        effective_seeds: (r > 0.0 && r < 1.0).then(|| n as f64 / (1.0 - r)),
        welch: welch(&pa, &pb, LEVEL),
        pairs,
    })
}

/// Pairs whose two runs log the same non-empty history of every metric, bit for bit.
fn bit_identical(pairing: &Pairing, a_runs: &[&Run], b_runs: &[&Run]) -> Vec<String> {
    pairing
        .pairs
        .iter()
        .filter(|(i, j, _)| {
            let (ra, rb) = (a_runs[*i].rec, b_runs[*j].rec);
            !ra.history.is_empty()
                && ra.history == rb.history
                && ra.history.values().any(|h| h.len() > 1)
        })
        .map(|(_, _, k)| k.clone())
        .collect()
}

fn holm_adjust(tasks: &mut [TaskResult], hib: bool, opts: &Options) {
    let idx: Vec<usize> = (0..tasks.len())
        .filter(|&i| tasks[i].power.is_some())
        .collect();
    let primary: Vec<f64> = idx.iter().map(|&i| task_primary(&tasks[i]).0.p).collect();
    let robust: Vec<f64> = idx.iter().map(|&i| task_primary(&tasks[i]).1.p).collect();
    let hp = holm(&primary);
    let hr = holm(&robust);
    for (k, &i) in idx.iter().enumerate() {
        let t = &mut tasks[i];
        t.holm_primary_p = Some(hp[k]);
        t.holm_robust_p = Some(hr[k]);
        let (primary, robust, prob, wins, ignoring) = task_primary(t);
        let integrity: Vec<String> = t
            .warnings
            .iter()
            .filter(|w| w.id == "integrity")
            .map(|w| w.message.clone())
            .collect();
        let power = t.power.as_ref().expect("analysed");
        let e = Evidence {
            higher_is_better: hib,
            alpha: opts.alpha,
            paired: t.paired.is_some(),
            n: t.paired
                .as_ref()
                .map(|p| p.pairs.len())
                .unwrap_or(t.a.values.len().min(t.b.values.len())),
            delta: primary.estimate,
            ci: primary.ci,
            primary: if t.paired.is_some() {
                "paired t-test"
            } else {
                "Welch t-test"
            },
            primary_p: hp[k],
            robust: if t.paired.is_some() {
                "exact sign-flip test"
            } else {
                "exact permutation test"
            },
            robust_p: hr[k],
            robust_min: robust.min_attainable,
            prob_a_better: prob,
            wins,
            mde: power.mde,
            seeds_for_observed: power.seeds_for_observed,
            tost: t.tost,
            integrity: &integrity,
            ignoring_pairing_p: ignoring,
            adjusted: "Holm-adjusted ",
        };
        t.verdict = verdict::decide(&e);
    }
}

type Primary = (TTest, PermP, f64, Option<(usize, usize)>, Option<f64>);

fn task_primary(t: &TaskResult) -> Primary {
    match (&t.paired, &t.unpaired) {
        (Some(p), _) => (
            p.t,
            p.sign_flip,
            p.prob_a_better,
            Some((p.wins, p.losses)),
            Some(p.welch.p),
        ),
        (None, Some(u)) => (u.welch, u.permutation, u.prob_a_better, None, None),
        (None, None) => unreachable!("analysed tasks have one design"),
    }
}

fn overall_verdict(tasks: &[TaskResult]) -> Verdict {
    use VerdictKind::*;
    let count = |k: VerdictKind| tasks.iter().filter(|t| t.verdict.kind == k).count();
    let m = tasks.len();
    let analysed = m - count(Refused);
    let make = |kind: VerdictKind, reason: String| Verdict {
        kind,
        headline: kind.headline(),
        reason,
    };
    if analysed == 0 {
        return make(Refused, format!("every one of the {m} tasks has an arm with fewer than 2 usable runs; one run proves nothing."));
    }
    let (ab, al, bb, bl, eq) = (
        count(ABetter),
        count(ALikelyBetter),
        count(BBetter),
        count(BLikelyBetter),
        count(NoMeaningfulDifference),
    );
    let tally = format!(
        "per task (Holm-adjusted): A better {ab}, A likely {al}, B better {bb}, B likely {bl}, no meaningful difference {eq}, inconclusive {}, refused {}",
        count(Inconclusive),
        count(Refused)
    );
    if ab > 0 && bb + bl == 0 {
        make(
            ABetter,
            format!("A is better on {ab} of {m} tasks and B on none; {tally}."),
        )
    } else if bb > 0 && ab + al == 0 {
        make(
            BBetter,
            format!("B is better on {bb} of {m} tasks and A on none; {tally}."),
        )
    } else if (ab + al > 0) && (bb + bl > 0) {
        make(
            Inconclusive,
            format!("the tasks disagree: some favour A, some B; {tally}."),
        )
    } else if al > 0 {
        make(
            ALikelyBetter,
            format!("A leans ahead on {al} of {m} tasks without a decisive result; {tally}."),
        )
    } else if bl > 0 {
        make(
            BLikelyBetter,
            format!("B leans ahead on {bl} of {m} tasks without a decisive result; {tally}."),
        )
    } else if eq == analysed {
        make(
            NoMeaningfulDifference,
            format!("every analysed task is within the equivalence margin; {tally}."),
        )
    } else {
        make(
            Inconclusive,
            format!("no task shows a clear difference; {tally}."),
        )
    }
}

/// Warnings about the design as a whole: best-of-n, confounds, unequal run lengths.
fn design_warnings(runs: &[Run], arms: &Arms, opts: &Options, multi: bool) -> Vec<Warning> {
    let mut out = Vec::new();
    if opts.reduce == Reduction::Best {
        let mut pts: Vec<usize> = runs.iter().map(|r| r.red.points).collect();
        pts.sort_unstable();
        out.push(warnings::best_of_n(
            pts.get(pts.len() / 2).copied().unwrap_or(1),
        ));
    }
    let recs: Vec<&RunRecord> = runs.iter().map(|r| r.rec).collect();
    let arm_key = match &arms.key {
        arms::ArmKey::Config(k) => Some(k.as_str()),
        arms::ArmKey::Group => None,
    };
    let confounds: BTreeMap<String, BTreeSet<String>> = arms::varying_config_keys(&recs)
        .into_iter()
        .filter(|(k, _)| Some(k.as_str()) != arm_key && !arms::is_structural(k))
        .filter(|(k, _)| !(multi && arms::TASK_KEYS.contains(&k.as_str())))
        .collect();
    if !confounds.is_empty() {
        let list: Vec<String> = confounds
            .iter()
            .take(5)
            .map(|(k, v)| {
                let vals: Vec<&str> = v.iter().take(4).map(String::as_str).collect();
                format!("{k} ({})", vals.join(", "))
            })
            .collect();
        out.push(Warning::new(
            "confounds",
            format!(
                "configs differ beyond the arm key: {}{} — a difference may come from these, not from {}.",
                list.join("; "),
                if confounds.len() > 5 { format!(" and {} more", confounds.len() - 5) } else { String::new() },
                arms.key
            ),
        ));
    }
    if opts.reduce != Reduction::Best && !matches!(opts.reduce, Reduction::AtStep { .. }) {
        let steps: Vec<f64> = runs.iter().filter_map(|r| r.red.last_step).collect();
        if let (Some(lo), Some(hi)) = (
            steps.iter().copied().reduce(f64::min),
            steps.iter().copied().reduce(f64::max),
        ) {
            if lo != hi {
                out.push(Warning::new(
                    "unequal-lengths",
                    format!(
                        "runs end at different steps ({} to {}): a longer run may simply have trained more; use --reduce at-step:{} to align.",
                        num(lo),
                        num(hi),
                        num(lo)
                    ),
                ));
            }
        }
    }
    let _ = signed;
    out
}
