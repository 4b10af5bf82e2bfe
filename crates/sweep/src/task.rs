//! One task's analysis: descriptives of each arm, the design (paired or not), its tests, power,
//! equivalence, warnings and the verdict. A task is either refused (an arm with fewer than two
//! usable runs, or values too large for f64) or analysed; an analysed task keeps the
//! [`Evidence`] its verdict was judged on, so a multi-task comparison can judge it again with
//! Holm-adjusted p-values.

use crate::arms::Arms;
use crate::comparison::{ArmStats, PairRow, PairedStats, TaskResult, UnpairedStats};
use crate::options::{Options, LEVEL, MAX_MAGNITUDE};
use crate::pairing::{self, Pairing};
use crate::power::{self, Power};
use crate::record::RunRecord;
use crate::reduce::Reduced;
use crate::stats::binomial::clopper_pearson;
use crate::stats::correlation::{pearson, spearman};
use crate::stats::describe::{skewness, variance, Describe};
use crate::stats::effect::{d_z, hedges_g};
use crate::stats::mannwhitney::mann_whitney;
use crate::stats::permutation::two_sample;
use crate::stats::signflip::sign_flip;
use crate::stats::ttest::{one_sample, welch, TTest};
use crate::stats::wilcoxon::signed_rank;
use crate::stats::PermP;
use crate::verdict::{self, Evidence, Test, Tost, Verdict};
use crate::warnings::{self, Warning};
use mldebug_text::number::num;
use mldebug_text::rng::Rng;

/// One run with its reduced value.
pub(crate) struct Run<'a> {
    pub rec: &'a RunRecord,
    pub red: Reduced,
}

impl Run<'_> {
    /// The reduced value is finite (the run did not blow up).
    pub fn ok(&self) -> bool {
        self.red.value.is_finite()
    }
}

/// A task after analysis.
pub(crate) enum TaskOutcome {
    Refused(TaskResult),
    /// The result and the evidence its verdict was judged on.
    Analysed(TaskResult, Evidence),
}

impl TaskOutcome {
    pub fn result(&self) -> &TaskResult {
        match self {
            TaskOutcome::Refused(r) | TaskOutcome::Analysed(r, _) => r,
        }
    }

    pub fn into_result(self) -> TaskResult {
        match self {
            TaskOutcome::Refused(r) | TaskOutcome::Analysed(r, _) => r,
        }
    }
}

/// The arms of one task, as the comparison hands them over.
pub(crate) struct TaskInput<'r, 'a> {
    pub task: Option<String>,
    pub a: &'r [&'r Run<'a>],
    pub b: &'r [&'r Run<'a>],
}

/// Analyse one task. `rng` drives the unpaired permutation test; it is shared across tasks in
/// order, so the result depends only on the seed and the input.
pub(crate) fn analyse(
    input: TaskInput,
    arms: &Arms,
    hib: bool,
    opts: &Options,
    rng: &mut Rng,
) -> TaskOutcome {
    let a = arm_stats(&arms.a, input.a);
    let b = arm_stats(&arms.b, input.b);
    let mut warnings = failed_run_warnings(&a, &b);
    if let Some(verdict) = refusal(&a, &b) {
        return TaskOutcome::Refused(TaskResult {
            task: input.task,
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
        });
    }

    let a_recs: Vec<&RunRecord> = input.a.iter().map(|r| r.rec).collect();
    let b_recs: Vec<&RunRecord> = input.b.iter().map(|r| r.rec).collect();
    let pairing = pairing::decide(&a_recs, &b_recs, &opts.pair_by);
    if pairing.duplicate {
        warnings.push(Warning::new("duplicate-seed", pairing.why.clone()));
    }
    let mut design = pairing.why.clone();
    let paired = match build_paired(&pairing, input.a, input.b, hib) {
        Paired::Stats(p) => Some(*p),
        Paired::TooFew(n) => {
            design = format!(
                "{design}, but only {n} complete pair(s) after failures: analysed unpaired"
            );
            None
        }
        Paired::No => None,
    };
    let mut integrity = Vec::new();
    let analysis = match &paired {
        Some(p) => {
            integrity = integrity_failures(&pairing, input.a, input.b);
            paired_analysis(p, integrity.is_empty(), opts, &mut warnings)
        }
        None => unpaired_analysis(&a, &b, hib, opts, rng, &mut warnings),
    };
    warnings.extend(seed_lottery(&a, &b, analysis.primary.estimate, hib, arms));

    let n = paired
        .as_ref()
        .map(|p| p.pairs.len())
        .unwrap_or(a.values.len().min(b.values.len()));
    let evidence = Evidence {
        higher_is_better: hib,
        alpha: opts.alpha,
        test: analysis.test,
        n,
        delta: analysis.primary.estimate,
        ci: analysis.primary.ci,
        primary_p: analysis.primary.p,
        robust_p: analysis.robust.p,
        robust_min: analysis.robust.min_attainable,
        prob_a_better: analysis.prob_a_better,
        wins: analysis.wins,
        mde: analysis.power.mde,
        seeds_for_observed: analysis.power.seeds_for_observed,
        tost: analysis.tost,
        integrity,
        ignoring_pairing_p: analysis.ignoring_pairing_p,
        holm_adjusted: false,
    };
    let verdict = verdict::decide(&evidence);
    for i in &evidence.integrity {
        warnings.push(Warning::new("integrity", i.clone()));
    }
    let result = TaskResult {
        task: input.task,
        a,
        b,
        design,
        paired,
        unpaired: analysis.unpaired,
        power: Some(analysis.power),
        tost: analysis.tost,
        holm_primary_p: None,
        holm_robust_p: None,
        verdict,
        warnings,
    };
    TaskOutcome::Analysed(result, evidence)
}

/// The numbers one design contributes to the evidence.
struct Analysis {
    test: Test,
    primary: TTest,
    robust: PermP,
    prob_a_better: f64,
    wins: Option<(usize, usize)>,
    ignoring_pairing_p: Option<f64>,
    power: Power,
    tost: Option<Tost>,
    unpaired: Option<UnpairedStats>,
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

fn failed_run_warnings(a: &ArmStats, b: &ArmStats) -> Vec<Warning> {
    [("A", a), ("B", b)]
        .into_iter()
        .filter(|(_, s)| !s.failed.is_empty())
        .map(|(label, s)| {
            Warning::new(
                "failed-runs",
                format!(
                    "{} of {} runs in {label} ({}) ended NaN/inf and are left out: {}",
                    s.failed.len(),
                    s.failed.len() + s.values.len(),
                    s.name,
                    s.failed.join(", ")
                ),
            )
        })
        .collect()
}

/// Rule 1: an arm with fewer than two usable runs, or values too large to compute with.
fn refusal(a: &ArmStats, b: &ArmStats) -> Option<Verdict> {
    [("A", a), ("B", b)]
        .into_iter()
        .find(|(_, s)| s.values.len() < 2)
        .map(|(label, s)| Verdict::refuse(label, &s.name, s.values.len(), s.failed.len()))
        .or_else(|| too_large(a, b))
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
pub(crate) fn seed_order(a: &Option<String>, b: &Option<String>) -> std::cmp::Ordering {
    match (a, b) {
        (Some(x), Some(y)) => match (x.parse::<f64>(), y.parse::<f64>()) {
            (Ok(p), Ok(q)) => p.total_cmp(&q),
            _ => x.cmp(y),
        },
        _ => a.cmp(b),
    }
}

/// The paired design's tests on the pair differences, and its warnings.
fn paired_analysis(
    p: &PairedStats,
    integrity_ok: bool,
    opts: &Options,
    warnings: &mut Vec<Warning>,
) -> Analysis {
    let d: Vec<f64> = p.pairs.iter().map(|x| x.diff).collect();
    let same_value = p.pairs.iter().filter(|x| x.diff == 0.0).count();
    if same_value > 0 && integrity_ok {
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
    let power = power::paired(
        variance(&d).sqrt(),
        d.len(),
        p.t.estimate,
        opts.mde,
        opts.alpha,
    );
    let tost = opts
        .equivalence_margin
        .map(|m| Tost::within(m, one_sample(&d, 0.90).ci));
    Analysis {
        test: Test::Paired,
        primary: p.t,
        robust: p.sign_flip,
        prob_a_better: p.prob_a_better,
        wins: Some((p.wins, p.losses)),
        ignoring_pairing_p: Some(p.welch.p),
        power,
        tost,
        unpaired: None,
    }
}

/// The unpaired design: Welch, the exact permutation test, Mann-Whitney, and its warnings.
fn unpaired_analysis(
    a: &ArmStats,
    b: &ArmStats,
    hib: bool,
    opts: &Options,
    rng: &mut Rng,
    warnings: &mut Vec<Warning>,
) -> Analysis {
    let av: Vec<f64> = a.values.iter().map(|v| v.2).collect();
    let bv: Vec<f64> = b.values.iter().map(|v| v.2).collect();
    let w = welch(&av, &bv, LEVEL);
    let perm = two_sample(&av, &bv, rng);
    let mw = mann_whitney(&av, &bv);
    let prob = if hib {
        mw.prob_a_greater
    } else {
        1.0 - mw.prob_a_greater
    };
    let mean_b = b.describe.as_ref().map(|d| d.mean).unwrap_or(f64::NAN);
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
    let power = power::unpaired(
        (variance(&av).sqrt(), av.len()),
        (variance(&bv).sqrt(), bv.len()),
        w.estimate,
        opts.mde,
        opts.alpha,
    );
    let tost = opts
        .equivalence_margin
        .map(|m| Tost::within(m, welch(&av, &bv, 0.90).ci));
    Analysis {
        test: Test::Unpaired,
        primary: w,
        robust: perm,
        prob_a_better: prob,
        wins: None,
        ignoring_pairing_p: None,
        power,
        tost,
        unpaired: Some(UnpairedStats {
            welch: w,
            permutation: perm,
            mann_whitney: mw,
            prob_a_better: prob,
            hedges_g: hedges_g(&av, &bv),
            relative: w.estimate / mean_b.abs(),
        }),
    }
}

/// The seed-lottery warning, with the arm the primary estimate favours named first.
fn seed_lottery(a: &ArmStats, b: &ArmStats, estimate: f64, hib: bool, arms: &Arms) -> Vec<Warning> {
    let sign = if hib { 1.0 } else { -1.0 };
    // Oriented so larger is better.
    let oa: Vec<f64> = a.values.iter().map(|v| v.2 * sign).collect();
    let ob: Vec<f64> = b.values.iter().map(|v| v.2 * sign).collect();
    let name_a = format!("A ({})", arms.a);
    let name_b = format!("B ({})", arms.b);
    if estimate * sign >= 0.0 {
        warnings::seed_lottery((&name_a, &oa), (&name_b, &ob))
    } else {
        warnings::seed_lottery((&name_b, &ob), (&name_a, &oa))
    }
    .into_iter()
    .collect()
}

/// Pairs whose two runs log the same history, in words (empty when none).
fn integrity_failures(pairing: &Pairing, a_runs: &[&Run], b_runs: &[&Run]) -> Vec<String> {
    let identical = bit_identical(pairing, a_runs, b_runs);
    if identical.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "{} pair(s) log bit-identical histories ({}) — the method flag may not be applied",
        identical.len(),
        identical.join(", ")
    )]
}

/// The paired design's outcome.
enum Paired {
    /// The runs are not paired.
    No,
    /// Paired, but fewer than two complete pairs survive the failed runs.
    TooFew(usize),
    Stats(Box<PairedStats>),
}

fn build_paired(pairing: &Pairing, a_runs: &[&Run], b_runs: &[&Run], hib: bool) -> Paired {
    let Some(key) = pairing.key.clone() else {
        return Paired::No;
    };
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
    let n = pairs.len();
    if n < 2 {
        return Paired::TooFew(n);
    }
    pairs.sort_by(|x, y| seed_order(&Some(x.key.clone()), &Some(y.key.clone())));
    let d: Vec<f64> = pairs.iter().map(|p| p.diff).collect();
    let pa: Vec<f64> = pairs.iter().map(|p| p.a).collect();
    let pb: Vec<f64> = pairs.iter().map(|p| p.b).collect();
    let sign = if hib { 1.0 } else { -1.0 };
    let wins = d.iter().filter(|x| **x * sign > 0.0).count();
    let losses = d.iter().filter(|x| **x * sign < 0.0).count();
    let t = one_sample(&d, LEVEL);
    let r = pearson(&pa, &pb);
    let decided = (wins + losses) as u64;
    let mean_b = pb.iter().sum::<f64>() / n as f64;
    // A generator local to the pair analysis keeps the sign-flip draws (n > 30 only) independent
    // of how many tasks came before.
    let mut rng = Rng::new(n as u64);
    Paired::Stats(Box::new(PairedStats {
        key,
        dropped_failed,
        unmatched: pairing.unmatched.clone(),
        t,
        sign_flip: sign_flip(&d, &mut rng),
        wilcoxon: signed_rank(&d),
        wins,
        ties: n - wins - losses,
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
    }))
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
