//! The comparison itself: runs in, every number and the verdict out, no I/O.
//!
//! Flow: choose the metric and its direction → reduce every run → assign arms → split by task →
//! per task: descriptives, pairing, tests, power, verdict, warnings → across tasks: Holm and the
//! stratified-bootstrap aggregates → the overall verdict.
//!
//! Choices worth knowing (refs/sweeps.md explains the verdicts to users):
//! - Wins / ties / losses count "better", not ">", so they follow the metric's direction;
//!   P(A_i better) and its Clopper-Pearson interval are over decided pairs (ties set aside, as the
//!   sign test does).
//! - Multi-task verdicts: each task gets the single-task verdict rules with Holm-adjusted p-values (primary and
//!   exact families adjusted separately); the overall verdict is A BETTER when at least one task
//!   is and none leans to B (mirror for B), INCONCLUSIVE when tasks disagree. The bootstrap
//!   aggregates are reported, never voted on: percentile intervals under-cover at few seeds.
//! - One `--bootstrap-reps` (default 50,000) serves both IQM and probability of improvement.
//! - No score normalisation across tasks (`--normalize` is not offered): IQM over tasks is only
//!   meaningful when tasks share a scale, and the report says so.
//! - A pair whose two runs log bit-identical histories of the metric is an integrity failure
//!   (the same run twice); equal reduced values alone are only a warning.

use crate::arms::{self, Arms};
use crate::design::design_warnings;
use crate::duplicates;
use crate::multi_task::{holm_adjust, overall_verdict};
use crate::pairing::{self, PairBy};
use crate::record::RunRecord;
use crate::reduce;
use crate::stats::bootstrap::{self, Aggregates, TaskScores};
use crate::task::{self, Run, TaskInput, TaskOutcome};
use crate::warnings::Warning;
use crate::Result;
use mldebug_text::rng::Rng;
use std::collections::BTreeSet;
use std::path::PathBuf;

pub use crate::comparison::{
    ArmStats, Comparison, PairRow, PairedStats, RunRow, TaskResult, UnpairedStats,
};

pub use crate::options::{Options, DEFAULT_ALPHA, DEFAULT_BOOTSTRAP_REPS, LEVEL, MAX_MAGNITUDE};

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
    let (repeats, repeat_warning) = duplicates::find(records);
    let once: Vec<&RunRecord> = records
        .iter()
        .enumerate()
        .filter(|(i, _)| !repeats.contains(i))
        .map(|(_, r)| r)
        .collect();
    let selected: Vec<&RunRecord> = once
        .iter()
        .copied()
        .filter(|r| in_arm(r, &arms).is_some())
        .collect();
    let metric = arms::choose_metric(&selected, opts.metric.as_deref())?;
    let direction = arms::direction(&metric, opts.higher_is_better, opts.lower_is_better);
    let hib = direction.higher_is_better;
    check_pair_key(&selected, &opts.pair_by)?;
    let runs = selected
        .iter()
        .map(|r| {
            Ok(Run {
                rec: r,
                red: reduce::reduce(r, &metric, opts.reduce, hib)?,
            })
        })
        .collect::<Result<Vec<Run>>>()?;
    let rows = run_rows(&once, &runs, &arms);

    let mut outcomes = analyse_tasks(&runs, &arms, hib, opts);
    let multi = outcomes.len() > 1;
    let mut warnings: Vec<Warning> = repeat_warning.into_iter().collect();
    let aggregates = if multi {
        holm_adjust(&mut outcomes);
        warnings.push(Warning::new(
            "multiple-comparisons",
            format!(
                "{} tasks compared: per-task p-values are Holm-adjusted, and each task's verdict \
                 uses the adjusted values.",
                outcomes.len()
            ),
        ));
        aggregates(&outcomes, hib, opts)
    } else {
        None
    };
    let tasks: Vec<TaskResult> = outcomes.into_iter().map(TaskOutcome::into_result).collect();
    warnings.extend(design_warnings(&runs, &arms, opts, multi));
    let verdict = if multi {
        overall_verdict(&tasks)
    } else {
        tasks[0].verdict.clone()
    };
    let files: BTreeSet<&PathBuf> = records.iter().map(|r| &r.source).collect();
    Ok(Comparison {
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
        warnings,
        rng_seed: opts.rng_seed,
        bootstrap_reps: opts.bootstrap_reps,
    })
}

/// "A", "B", or None for a run in neither arm.
fn in_arm(r: &RunRecord, arms: &Arms) -> Option<&'static str> {
    match arms::arm_of(r, &arms.key) {
        Some(v) if v == arms.a => Some("A"),
        Some(v) if v == arms.b => Some("B"),
        _ => None,
    }
}

/// `--pair-by KEY`: every selected run must have the key.
fn check_pair_key(selected: &[&RunRecord], pair_by: &PairBy) -> Result<()> {
    if let PairBy::Key(k) = pair_by {
        if let Some(r) = selected.iter().find(|r| pairing::key_value(r, k).is_none()) {
            return Err(crate::Error::input(
                &r.source,
                reduce::place(r),
                format!("--pair-by {k}: this run has no `{k}` (neither a seed nor a config key)"),
            ));
        }
    }
    Ok(())
}

/// Every run once: those in an arm first (with their values), then the rest.
fn run_rows(once: &[&RunRecord], runs: &[Run], arms: &Arms) -> Vec<RunRow> {
    let row = |r: &RunRecord| RunRow {
        name: r.name.clone(),
        file: r.source.clone(),
        place: r.place.clone(),
        seed: r.seed.clone(),
        task: r.task.clone(),
        arm: in_arm(r, arms),
        label: arms::arm_of(r, &arms.key),
        value: f64::NAN,
        failed: false,
        last_step: None,
        points: 0,
    };
    let in_arms = runs.iter().map(|r| RunRow {
        value: r.red.value,
        failed: !r.ok(),
        last_step: r.red.last_step,
        points: r.red.points,
        ..row(r.rec)
    });
    let outside = once
        .iter()
        .filter(|r| in_arm(r, arms).is_none())
        .map(|r| row(r));
    in_arms.chain(outside).collect()
}

/// One analysis per task, in task order (one generator shared in that order).
fn analyse_tasks(runs: &[Run], arms: &Arms, hib: bool, opts: &Options) -> Vec<TaskOutcome> {
    let names: BTreeSet<Option<String>> = runs.iter().map(|r| r.rec.task.clone()).collect();
    let multi = names.len() > 1;
    let mut rng = Rng::new(opts.rng_seed);
    names
        .iter()
        .map(|t| {
            let mine = |arm: &str| -> Vec<&Run> {
                runs.iter()
                    .filter(|r| &r.rec.task == t && in_arm(r.rec, arms) == Some(arm))
                    .collect()
            };
            let (a, b) = (mine("A"), mine("B"));
            let task = if multi {
                Some(t.clone().unwrap_or_else(|| "(none)".into()))
            } else {
                t.clone()
            };
            task::analyse(TaskInput { task, a: &a, b: &b }, arms, hib, opts, &mut rng)
        })
        .collect()
}

/// IQM and probability of improvement with stratified bootstrap intervals, over the tasks where
/// both arms have values (at least two such tasks).
fn aggregates(outcomes: &[TaskOutcome], hib: bool, opts: &Options) -> Option<Aggregates> {
    let scores: Vec<TaskScores> = outcomes
        .iter()
        .map(TaskOutcome::result)
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
}
