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
//! - **step too large** — the first AdamW step moves the weights by a large share of their own
//!   size (an effective learning rate far above the nominal one), and the loss bounces instead
//!   of falling (a warning when the batch is memorised anyway);
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
//! Training uses AdamW without weight decay at `Options::learning_rate` for up to
//! `Options::steps` steps, stopping early once the batch is memorised.

use super::buffers;
use super::fresh::{restoring, Fresh};
use super::loss::masked_cross_entropy;
use super::optimizer::CheckOptimizer;
use super::read::{l2_norm, loss_value, scalar};
use super::{next_after, show_command};
use crate::init::ParamStore;
use crate::model::{Batch, DebugModel, Task};
use crate::options::{Options, MAX_STEPS};
use crate::report::{CheckId, Finding, Series, Status};
use candle_core::{Result, Tensor, Var};

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
    Rising,
    Numerics,
    Plateau,
    Sign,
    NoSignal,
    /// Not memorised, but still falling steadily at the end: more steps would get further.
    Slow,
    /// Each step moves the weights by a large share of their size: an effective learning rate
    /// far above the nominal one.
    StepTooLarge,
}

impl Why {
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

/// Trains fresh parameters of `M` on `M::batch(seed)`.
pub fn overfit<M: DebugModel>(opts: &Options) -> Result<Finding> {
    let fresh = Fresh::<M>::new(opts, opts.seed)?;
    run(&fresh.model, &fresh.params, &fresh.batch, opts)
}

/// Trains the caller's model on `batch`, then puts every parameter in `params` back.
pub fn overfit_on<M: DebugModel>(
    model: &M,
    params: &ParamStore,
    batch: &Batch,
    opts: &Options,
) -> Result<Finding> {
    restoring(params, || run(model, params, batch, opts))
}

fn run<M: DebugModel>(
    model: &M,
    params: &ParamStore,
    batch: &Batch,
    opts: &Options,
) -> Result<Finding> {
    let classifies = M::task() != Task::Regression;
    // Buffers (BatchNorm's running statistics) are not trained: the optimizer never sees them
    // and the update ratio leaves them out.
    let split = buffers::split(model, params, batch)?;
    let vars = split.param_vars();
    let trainable = vars.iter().filter(|v| v.dtype().is_float()).count();
    if trainable == 0 {
        return Ok(Finding::new(
            ID,
            Status::Fail,
            "no trainable parameters: every parameter must come from the VarBuilder",
        )
        .next(opts.check_command(CheckId::GradFlow)));
    }
    let mut opt = CheckOptimizer::new(vars, opts.learning_rate)?;
    let total = opts.steps.max(1);
    // One loss per step; the capacity is only a hint, so a huge `steps` cannot ask for it all.
    let mut losses: Vec<f64> = Vec::with_capacity(total.min(MAX_STEPS).saturating_add(1));
    let mut start_ce = None;
    let mut end_ce = None;
    let weights: Vec<(String, Var)> = split
        .params
        .iter()
        .filter(|(_, v)| v.dtype().is_float() && v.rank() >= 2)
        .cloned()
        .collect();
    let before = weights
        .iter()
        .map(|(_, v)| v.as_detached_tensor().copy())
        .collect::<Result<Vec<_>>>()?;
    let mut updates = Vec::new();
    for step in 0..=total {
        opts.check_deadline()?;
        let output = model.forward(&batch.input, true)?;
        let loss = model.loss(&output, &batch.targets)?;
        let value = loss_value(&loss)?;
        losses.push(value);
        if classifies {
            let ce = scalar(&masked_cross_entropy(&output, &batch.targets)?).ok();
            if step == 0 {
                start_ce = ce;
            }
            end_ce = ce;
        }
        opts.report_progress(ID, step, total, Some(value));
        let first = losses[0];
        let memorised = value <= OVERFIT_PASS_RATIO * first
            || (classifies && (0.0..OVERFIT_ABS_PASS).contains(&value));
        if !value.is_finite() || step == total || (first > 0.0 && memorised) || first == 0.0 {
            break;
        }
        opt.backward_step(&loss)?;
        if step == 0 {
            updates = first_step_updates(&weights, &before)?;
        }
    }
    Ok(judge(&losses, &updates, start_ce, end_ce, classifies, opts))
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

/// `‖θ₁ − θ₀‖ / ‖θ₀‖` of every weight matrix over the first optimizer step, sorted ascending.
/// Adam's first step moves every element by about the learning rate, so this is the learning
/// rate measured against the weights' own scale.
fn first_step_updates(weights: &[(String, Var)], before: &[Tensor]) -> Result<Vec<(String, f64)>> {
    let mut out = Vec::with_capacity(weights.len());
    for ((name, var), old) in weights.iter().zip(before) {
        let norm = l2_norm(old)?;
        if norm > 0.0 {
            let moved = l2_norm(&(var.as_detached_tensor() - old)?)?;
            out.push((name.clone(), moved / norm));
        }
    }
    out.sort_by(|a, b| a.1.total_cmp(&b.1));
    Ok(out)
}

fn judge(
    losses: &[f64],
    updates: &[(String, f64)],
    start_ce: Option<f64>,
    end_ce: Option<f64>,
    classifies: bool,
    opts: &Options,
) -> Finding {
    let curve = measure(losses, updates);
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
        return super::skipped(ID, format!("the loss starts negative ({first:.3}): a relative fall cannot be judged for this loss"));
    } else if last > first {
        (
            Status::Fail,
            Some(if step_too_large.is_some() { Why::StepTooLarge } else { Why::Rising }),
            format!("rising: the loss rose from {first:.3} to {last:.3} in {steps} steps; the update goes the wrong way (the loss's sign?) or the step is far too large{step_note}"),
        )
    } else if ratio <= OVERFIT_PASS_RATIO || (classifies && last < OVERFIT_ABS_PASS) {
        match step_too_large {
            Some(u) => (
                Status::Warn,
                Some(Why::StepTooLarge),
                format!("memorised one batch (loss {first:.3} -> {last:.4} in {steps} steps), but the first step moved the weights by {:.0}% of their size: on real data a step this large diverges", 100.0 * u),
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
            format!("step too large: the loss only got from {first:.3} to {last:.3} ({:.0}% of start) in {steps} steps{step_note} (an effective learning rate far above --lr: tiny weights, or a multiplier in forward)", 100.0 * ratio),
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
    let next = next_command(why, status, opts);
    let f = Finding::new(ID, status, summary).next(next);
    with_numbers(f, &curve, losses, updates, (start_ce, end_ce), why, opts)
}

/// What the loss curve and the first step's update say, before any verdict.
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

fn measure(losses: &[f64], updates: &[(String, f64)]) -> Curve {
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
                "; the first step moved the weights by {:.0}% of their size (median over weight matrices): the step is far too large for them",
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
    opts: &Options,
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
        .metric("learning_rate", opts.learning_rate)
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
fn next_command(why: Option<Why>, status: Status, opts: &Options) -> String {
    match why {
        None if status == Status::Pass => next_after(ID, opts),
        Some(Why::Numerics) => opts.check_command(CheckId::NanTrace),
        Some(Why::Plateau) => opts.check_command(CheckId::GradFlow),
        Some(Why::NoSignal) => opts.check_command(CheckId::LabelMask),
        // More steps, within what `--steps` accepts.
        Some(Why::Slow) => format!(
            "{} --steps {}",
            opts.check_command(ID),
            opts.steps.max(1).saturating_mul(5).min(MAX_STEPS)
        ),
        _ => show_command(ID),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loss_that_is_nan_from_the_start_ends_nan_not_infinite() {
        let f = judge(&[f64::NAN], &[], None, None, true, &Options::default());
        assert_eq!(f.status, Status::Fail);
        assert!(f.summary.starts_with("numerics"), "{}", f.summary);
        assert!(f.metrics["loss_end"].is_nan(), "{:?}", f.metrics);
        // A NaN at the end of a finite run: the last finite losses are the end.
        let f = judge(
            &[2.0, 1.0, f64::NAN],
            &[],
            None,
            None,
            true,
            &Options::default(),
        );
        assert_eq!(f.metrics["loss_end"], 1.0);
    }
}
