//! `overfit`: can the model memorise one small batch?
//!
//! A model and training loop that work can drive the loss on a single fixed batch of a dozen
//! examples close to zero within a couple of hundred optimizer steps. If they cannot, nothing
//! trained on the full data will be right either, and the way the loss fails says where to look:
//! - **rising** — the loss grows: the update goes the wrong way (the loss's sign) or the step is
//!   far too large;
//! - **numerics** — the loss becomes NaN or infinite: overflow, `log(0)`, `0/0`, a learning rate
//!   that blows up;
//! - **plateau** — the loss falls a little and stops: too little capacity, or a bug that caps it
//!   (softmax before the cross-entropy, frozen or detached parameters, targets that do not match);
//! - **slow** — not memorised, but still falling steadily at the end: more steps would get
//!   further (common for regression targets far from the init's outputs);
//! - **step too large** — the first AdamW step, at this check's own learning rate, moves the
//!   weights by a large share of their own size (weights small for that rate, or a multiplier in
//!   forward), and the loss bounces instead of falling. When the batch is memorised anyway it
//!   is a pass with a note: the rate is the check's, not the user's, so it is no warning about
//!   anything the user did;
//! - **sign** — a cross-entropy that goes negative.
//!
//! On `zoo::mlp-softmax-ce` (softmax applied before the cross-entropy):
//! ```text
//! overfit  fail  plateau: the loss fell only from 1.393 to 0.744 (53% of start) in 200 steps;
//!                too little capacity, or a bug that caps it (softmax before the loss, frozen or
//!                detached parameters)
//! ```
//! Read: the loss curve (series "loss") flattens well above zero; the next command is grad-flow.
//!
//! Training uses AdamW without weight decay at the learning rate (3e-3 by default) for up to
//! `--steps` steps, stopping early once the batch is memorised.

use crate::common::{show_command, skipped, Ctx, MAX_STEPS};
use mldebug_report::non_finite;
use mldebug_report::{CheckId, Finding, Series, Status, Task};
use serde::{Deserialize, Serialize};

const ID: CheckId = CheckId::Overfit;

/// Memorised when the loss ends below this share of its start (TheDeepChecker
/// asks the same of a 16-sample batch). Clean zoo models get there in 50–86 of the 200 steps
/// (5 seeds); the twins that cannot stop at 20% (fused RmsNorm), 53% (softmax before the
/// cross-entropy), 55–76% (ten sigmoid layers), 100% (zero init).
pub const OVERFIT_PASS_RATIO: f64 = 0.05;
/// Between the pass ratio and this, "almost": more steps or a larger step would get there.
pub const OVERFIT_WARN_RATIO: f64 = 0.10;
/// For a cross-entropy, a mean loss below this means p(target) > 0.95: memorised whatever the
/// start (matters for two-class problems, whose start ln 2 is small).
pub const OVERFIT_ABS_PASS: f64 = 0.05;
/// A first optimizer step that moves the weight matrices by more than this share of their norm
/// (median over matrices) is too large. TheDeepChecker flags update/weight ratios above 10^-1
/// (refs/diagnostics.md, overfit). Zoo, 5 seeds: clean models 0.010–0.018; the lr x100 twin 1.2.
pub const OVERFIT_UPDATE_RATIO: f64 = 0.1;
/// A run that did not memorise is a plateau when its loss fell by less than 10% over the last
/// quarter of the steps (ratio above this), and "slow" (still falling) otherwise. Zoo, 5 seeds:
/// softmax before the cross-entropy 0.999–1.0, zero init 1.0, ten sigmoid layers 0.78–1.0
/// (stalled); the fused-RmsNorm GPT, whose head alone still learns, 0.74–0.80.
pub const OVERFIT_STALL_RATIO: f64 = 0.9;
/// The final loss is the smallest of the last few steps, so one noisy Adam step does not decide.
pub const OVERFIT_TAIL: usize = 5;

/// Why a run that did not memorise failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// The loss went up.
    Rising,
    /// The loss became NaN or infinite.
    Numerics,
    /// The loss stopped falling well above zero.
    Plateau,
    /// The loss is negative (a cross-entropy cannot be).
    Sign,
    /// The loss did not move at all.
    NoSignal,
    /// Not memorised, but still falling steadily at the end: more steps would get further.
    Slow,
    /// Each step moves the weights by a large share of their size: an effective learning rate
    /// far above the nominal one.
    StepTooLarge,
}

impl Why {
    /// The kebab-case name the summary starts with.
    pub fn as_str(self) -> &'static str {
        match self {
            Why::Rising => "rising",
            Why::Numerics => "numerics",
            Why::Plateau => "plateau",
            Why::Sign => "sign",
            Why::NoSignal => "no-signal",
            Why::StepTooLarge => "step-too-large",
            Why::Slow => "slow",
        }
    }
}

/// A training run on one batch.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Measurement {
    /// The loss before each step: the steps taken plus one.
    #[serde(with = "non_finite::list")]
    pub losses: Vec<f64>,
    /// After the first step, `||W1 - W0|| / ||W0||` per weight matrix, smallest first.
    #[serde(default, with = "non_finite::named")]
    pub updates: Vec<(String, f64)>,
    /// The mean cross-entropy of the outputs at the start and the end (classifiers and LMs).
    #[serde(default, with = "non_finite::option")]
    pub start_ce: Option<f64>,
    /// The same at the end.
    #[serde(default, with = "non_finite::option")]
    pub end_ce: Option<f64>,
    /// Trainable parameter tensors.
    pub trainable: usize,
    /// Only LoRA adapters train (the base weights are frozen, and random when the model was
    /// built from a config): memorising one batch is not expected, learning is.
    #[serde(default)]
    pub adapters_only: bool,
}

/// The last loss over the loss a quarter of the run earlier (`None` for runs too short to say).
fn last_quarter_ratio(losses: &[f64]) -> Option<f64> {
    let n = losses.len();
    if n < 8 {
        return None;
    }
    let earlier = losses[n - 1 - n / 4];
    (earlier > 0.0).then(|| losses[n - 1] / earlier)
}

/// The verdict on a measured training run.
pub fn judge(m: &Measurement, ctx: &Ctx) -> Finding {
    if m.trainable == 0 {
        return Finding::new(
            ID,
            Status::Fail,
            "no trainable parameters: every parameter must come from the VarBuilder (candle) or have requires_grad=True (PyTorch)",
        )
        .next(ctx.check_command(CheckId::GradFlow));
    }
    if m.losses.is_empty() {
        return skipped(ID, "no training step was measured");
    }
    let (losses, updates) = (&m.losses[..], &m.updates[..]);
    let (start_ce, end_ce) = (m.start_ce, m.end_ce);
    let classifies = ctx.task != Task::Regression;
    let curve = measure(losses, updates, ctx.learning_rate);
    let Curve {
        steps,
        first,
        last,
        ratio,
        bad_step,
        still_falling,
        step_too_large,
        ref step_note,
        ..
    } = curve;
    let (status, why, summary) = if let Some(k) = bad_step {
        let when = if k == 0 {
            "before any update".to_string()
        } else {
            format!("at step {k} (it started at {first:.3})")
        };
        (
            Status::Fail,
            Some(Why::Numerics),
            format!("numerics: the loss became {} {when}; overflow, log(0), 0/0 or a learning rate that blows up{step_note}", losses[k]),
        )
    } else if first == 0.0 {
        (
            Status::Fail,
            Some(Why::NoSignal),
            "the loss is exactly 0 before any training: nothing to learn from (is every target masked?)".to_string(),
        )
    } else if classifies && (first < 0.0 || last < 0.0) {
        let ce = match (start_ce, end_ce) {
            (Some(a), Some(b)) => {
                format!("; the cross-entropy of the outputs went from {a:.3} to {b:.3}")
            }
            _ => String::new(),
        };
        (
            Status::Fail,
            Some(Why::Sign),
            format!("sign: the loss is negative ({first:.3} -> {last:.3}) and a cross-entropy cannot be: minimising it pushes the targets' probability down{ce}"),
        )
    } else if first < 0.0 {
        return skipped(ID, format!("the loss starts negative ({first:.3}): a relative fall cannot be judged for this loss"));
    } else if last > first {
        (
            Status::Fail,
            Some(if step_too_large.is_some() { Why::StepTooLarge } else { Why::Rising }),
            format!("rising: the loss rose from {first:.3} to {last:.3} in {steps} steps; the update goes the wrong way (the loss's sign?) or the step is far too large{step_note}"),
        )
    } else if ratio <= OVERFIT_PASS_RATIO || (classifies && last < OVERFIT_ABS_PASS) {
        match step_too_large {
            Some(u) => (
                Status::Pass,
                None,
                format!("memorised one batch: loss {first:.3} -> {last:.4} ({:.1}% of start) in {steps} steps (at this check's own learning rate, {}, not your optimizer's, the first step moved the weights by {:.0}% of their size: AdamW moves each weight by about the rate, so small weights move by a large share)", 100.0 * ratio, ctx.learning_rate, 100.0 * u),
            ),
            None => (
                Status::Pass,
                None,
                format!("memorised one batch: loss {first:.3} -> {last:.4} ({:.1}% of start) in {steps} steps", 100.0 * ratio),
            ),
        }
    } else if ratio <= OVERFIT_WARN_RATIO {
        (
            Status::Warn,
            None,
            format!("almost memorised: loss {first:.3} -> {last:.4} ({:.1}% of start) in {steps} steps; try more steps (--steps){step_note}", 100.0 * ratio),
        )
    } else if step_too_large.is_some() {
        (
            Status::Fail,
            Some(Why::StepTooLarge),
            format!("step too large: the loss only got from {first:.3} to {last:.3} ({:.0}% of start) in {steps} steps{step_note} (weights small for that rate, or a multiplier in forward that magnifies them)", 100.0 * ratio),
        )
    } else if let Some(q) = still_falling {
        (
            Status::Fail,
            Some(Why::Slow),
            format!("slow: the loss fell from {first:.3} to {last:.3} ({:.0}% of start) in {steps} steps and is still falling ({:.0}% lower over the last quarter): not a plateau, give it more steps (--steps)", 100.0 * ratio, 100.0 * (1.0 - q)),
        )
    } else {
        (
            Status::Fail,
            Some(Why::Plateau),
            format!("plateau: the loss fell only from {first:.3} to {last:.3} ({:.0}% of start) in {steps} steps; too little capacity, or a bug that caps it (softmax before the loss, frozen or detached parameters)", 100.0 * ratio),
        )
    };
    let (status, summary) = adapters_learn(m, &curve, status, why, summary);
    let next = next_command(why, status, ctx);
    let f = Finding::new(ID, status, summary).next(next);
    with_numbers(f, &curve, losses, updates, (start_ce, end_ce), why, ctx)
}

/// What the loss curve and the first step's update say, before any verdict.
/// The loss must fall at least this far (relative) for adapters alone to count as learning.
pub const ADAPTERS_LEARN_RATIO: f64 = 0.9;

/// With only LoRA adapters training, a plateau or a slow fall is what low-rank updates on
/// frozen (here random) weights give: a warning when the loss fell by 10% or more, so a
/// working LoRA set-up does not fail; no fall at all still fails.
fn adapters_learn(
    m: &Measurement,
    curve: &Curve,
    status: Status,
    why: Option<Why>,
    summary: String,
) -> (Status, String) {
    let capped = matches!(why, Some(Why::Plateau | Why::Slow));
    if !(m.adapters_only && status == Status::Fail && capped) {
        return (status, summary);
    }
    if curve.ratio <= ADAPTERS_LEARN_RATIO {
        (
            Status::Warn,
            format!(
                "the LoRA adapters learn: the loss fell from {:.3} to {:.3} ({:.0}% of start) in {} steps; only the adapters train, so memorising one batch is not expected (the base weights are frozen, and random for a model built from its config)",
                curve.first,
                curve.last,
                100.0 * curve.ratio,
                curve.steps
            ),
        )
    } else {
        (
            status,
            format!("{summary}; only the LoRA adapters train, and they barely move the loss"),
        )
    }
}

struct Curve {
    steps: usize,
    first: f64,
    /// The smallest of the last few losses.
    last: f64,
    ratio: f64,
    /// The first step whose loss is NaN or infinite.
    bad_step: Option<usize>,
    quarter: Option<f64>,
    still_falling: Option<f64>,
    step_too_large: Option<f64>,
    /// "; the first step moved the weights by ..." when it was too large, else "".
    step_note: String,
}

fn measure(losses: &[f64], updates: &[(String, f64)], learning_rate: f64) -> Curve {
    let steps = losses.len() - 1;
    let first = losses[0];
    let tail = &losses[losses.len().saturating_sub(OVERFIT_TAIL)..];
    // NaN only when the whole tail is NaN (`f64::min` would skip it and leave +inf).
    let last = tail
        .iter()
        .copied()
        .filter(|l| !l.is_nan())
        .reduce(f64::min)
        .unwrap_or(f64::NAN);
    let ratio = last / first;
    let bad_step = losses.iter().position(|l| !l.is_finite());
    let update = updates.get(updates.len() / 2).map(|u| u.1);
    let quarter = last_quarter_ratio(losses);
    let still_falling = quarter.filter(|&q| q < OVERFIT_STALL_RATIO);
    let step_too_large = update.filter(|&u| u > OVERFIT_UPDATE_RATIO);
    let step_note = step_too_large
        .map(|u| {
            format!(
                "; the first step moved the weights by {:.0}% of their size (median over weight matrices) at this check's own learning rate ({learning_rate}, not your optimizer's): far too large a step for them",
                100.0 * u
            )
        })
        .unwrap_or_default();
    Curve {
        steps,
        first,
        last,
        ratio,
        bad_step,
        quarter,
        still_falling,
        step_too_large,
        step_note,
    }
}

/// The finding's numbers, its `why` line and the loss curve.
fn with_numbers(
    f: Finding,
    curve: &Curve,
    losses: &[f64],
    updates: &[(String, f64)],
    ce: (Option<f64>, Option<f64>),
    why: Option<Why>,
    ctx: &Ctx,
) -> Finding {
    let Curve {
        steps,
        first,
        last,
        ratio,
        quarter,
        ..
    } = *curve;
    let (start_ce, end_ce) = ce;
    let mut f = f
        .metric("loss_start", first)
        .metric("loss_end", last)
        .metric("ratio", ratio)
        .metric("steps", steps as f64)
        .metric("learning_rate", ctx.learning_rate)
        .metric(
            "update_ratio_median",
            updates.get(updates.len() / 2).map_or(f64::NAN, |u| u.1),
        )
        .metric("update_ratio_max", updates.last().map_or(f64::NAN, |u| u.1))
        .metric("last_quarter_ratio", quarter.unwrap_or(f64::NAN));
    if let Some(ce) = start_ce {
        f = f.metric("cross_entropy_start", ce);
    }
    if let Some(ce) = end_ce {
        f = f.metric("cross_entropy_end", ce);
    }
    if let Some(why) = why {
        f.details.push(format!("why: {}", why.as_str()));
    }
    f.series.push(Series {
        name: "loss".to_string(),
        x_label: "step".to_string(),
        y_label: "loss".to_string(),
        points: losses
            .iter()
            .enumerate()
            .map(|(i, &l)| [i as f64, l])
            .collect(),
        labels: Vec::new(),
    });
    f
}

/// Where to go after a verdict: the check that explains the way it failed.
fn next_command(why: Option<Why>, status: Status, ctx: &Ctx) -> String {
    match why {
        None if status == Status::Pass => ctx.next_after(ID),
        Some(Why::Numerics) => ctx.check_command(CheckId::NanTrace),
        Some(Why::Plateau) => ctx.check_command(CheckId::GradFlow),
        Some(Why::NoSignal) => ctx.check_command(CheckId::LabelMask),
        // More steps, within what `--steps` accepts.
        Some(Why::Slow) => format!(
            "{} --steps {}",
            ctx.check_command(ID),
            ctx.steps.max(1).saturating_mul(5).min(MAX_STEPS)
        ),
        _ => show_command(ID),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::test_ctx;

    fn run(losses: &[f64], updates: &[(&str, f64)], task: Task) -> Finding {
        let m = Measurement {
            losses: losses.to_vec(),
            updates: updates.iter().map(|(n, x)| (n.to_string(), *x)).collect(),
            start_ce: None,
            end_ce: None,
            trainable: 3,
            adapters_only: false,
        };
        judge(&m, &test_ctx(task))
    }

    #[test]
    fn a_loss_that_is_nan_from_the_start_ends_nan_not_infinite() {
        let f = run(&[f64::NAN], &[], Task::Classification);
        assert_eq!(f.status, Status::Fail);
        assert!(f.summary.starts_with("numerics"), "{}", f.summary);
        assert!(f.metrics["loss_end"].is_nan(), "{:?}", f.metrics);
        let f = run(&[2.0, 1.0, f64::NAN], &[], Task::Classification);
        assert_eq!(f.metrics["loss_end"], 1.0);
    }

    #[test]
    fn lora_adapters_that_learn_but_cannot_memorise_warn_and_ones_that_do_not_learn_fail() {
        let flat: Vec<f64> = (0..201)
            .map(|i| 5.5 - 1.0 * (1.0 - (-(i as f64) / 10.0).exp()))
            .collect();
        let mut m = Measurement {
            losses: flat,
            trainable: 8,
            adapters_only: true,
            ..Measurement::default()
        };
        let f = judge(&m, &test_ctx(Task::CausalLm));
        assert_eq!(f.status, Status::Warn, "{}", f.summary);
        assert!(
            f.summary.starts_with("the LoRA adapters learn"),
            "{}",
            f.summary
        );
        m.losses = vec![5.5; 201];
        assert_eq!(judge(&m, &test_ctx(Task::CausalLm)).status, Status::Fail);
        m.adapters_only = false;
        m.losses = (0..201)
            .map(|i| 5.5 - 1.0 * (1.0 - (-(i as f64) / 10.0).exp()))
            .collect();
        assert_eq!(judge(&m, &test_ctx(Task::CausalLm)).status, Status::Fail);
    }

    #[test]
    fn a_large_step_at_the_checks_own_rate_is_no_warning_when_the_batch_is_memorised() {
        let falling: Vec<f64> = (0..60).map(|i| 2.0 * 0.9f64.powi(i)).collect();
        let f = run(&falling, &[("w", 0.15)], Task::CausalLm);
        assert_eq!(f.status, Status::Pass, "{}", f.summary);
        assert!(
            f.summary
                .contains("this check's own learning rate, 0.003, not your optimizer's"),
            "{}",
            f.summary
        );
        assert!(!f.summary.contains("diverges"), "{}", f.summary);
        // Not memorised: still a failure, and still about the check's own rate.
        let flat: Vec<f64> = (0..201).map(|i| 2.0 - 0.3 * (i as f64 / 200.0)).collect();
        let f = run(&flat, &[("w", 0.15)], Task::Classification);
        assert_eq!(f.status, Status::Fail, "{}", f.summary);
        assert!(f.summary.starts_with("step too large"), "{}", f.summary);
        assert!(f.summary.contains("not your optimizer's"), "{}", f.summary);
    }

    #[test]
    fn each_shape_of_the_curve() {
        let falling: Vec<f64> = (0..60).map(|i| 2.0 * 0.9f64.powi(i)).collect();
        assert_eq!(
            run(&falling, &[("w", 0.01)], Task::Classification).status,
            Status::Pass
        );
        let flat: Vec<f64> = (0..201)
            .map(|i| 1.4 - 0.6 * (1.0 - (-(i as f64) / 10.0).exp()))
            .collect();
        let f = run(&flat, &[("w", 0.01)], Task::Classification);
        assert!(f.summary.starts_with("plateau"), "{}", f.summary);
        assert_eq!(f.next, "mldebug check grad-flow --model zoo::mlp");
        let rising: Vec<f64> = (0..201).map(|i| 1.0 + i as f64 / 100.0).collect();
        assert!(run(&rising, &[], Task::Classification)
            .summary
            .starts_with("rising"));
        assert!(run(&[-1.0, -2.0], &[], Task::Classification)
            .summary
            .starts_with("sign"));
        assert_eq!(run(&[0.0], &[], Task::Classification).status, Status::Fail);
        let none = Measurement::default();
        let f = judge(&none, &test_ctx(Task::Classification));
        assert!(
            f.summary.starts_with("no trainable parameters"),
            "{}",
            f.summary
        );
    }
}
