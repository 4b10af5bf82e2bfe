//! The loss backward is called on: earlier steps' losses still alive with their graph
//! (`loss-graph-kept`), and a loss that sums its terms instead of averaging them
//! (`loss-summed`).

use super::memory_estimate::MIB;
use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;
use crate::trace::records::Step;

/// A loop rebinds its loss variable every step, and may keep one or two earlier losses by name
/// (`last_loss = loss`, a best loss): the losses of this many steps in a row all alive, with
/// their graph, are held by a container that grows with the run (`losses.append(loss)`), so
/// the graphs it holds grow without bound. It is also the number of steps the probe watches
/// (probes/losses.py LOSS_WATCH): every watched step's loss alive.
pub(super) const LOSSES_KEPT: u64 = 16;

/// Optimizers whose step does not scale with the gradient's size: Adam's update is m/√v,
/// unchanged when the loss is multiplied by a constant (ε aside), and so are the others that
/// divide by a running average of the squared gradient. A summed loss changes their steps
/// little; it changes SGD's (and a hand-written update's) in proportion.
const SCALE_FREE: [&str; 11] = [
    "Adam",
    "AdamW",
    "Adamax",
    "NAdam",
    "RAdam",
    "Adagrad",
    "RMSprop",
    "Adadelta",
    "Adafactor",
    "SparseAdam",
    "Lion",
];

/// The findings that show a step too large for the model: a summed loss that makes the step
/// its number of terms times a mean's is then a cause worth naming.
const UNSTABLE: [Symptom; 6] = [
    Symptom::UpdateTooLarge,
    Symptom::LossDiverging,
    Symptom::LossSpikes,
    Symptom::LossNonfinite,
    Symptom::Nonfinite,
    Symptom::GradNormExplosion,
];

/// One of [`UNSTABLE`] at warn or fail (a spike the log detector rates as information is not).
fn is_unstable(f: &Finding) -> bool {
    UNSTABLE.contains(&f.symptom) && f.severity >= Severity::Warn
}

/// `loss-graph-kept`: at some step, the losses of the last [`LOSSES_KEPT`] steps of one
/// optimizer are all still alive with their graph. Every step's loss is watched; under a
/// cadence (`cadence` record) only the measured steps say how many are alive.
pub(super) fn judge_kept(p: &Process, out: &mut Vec<Finding>) {
    let Some(optimizer) = p
        .steps
        .iter()
        .find(|s| s.losses_watched.is_some())
        .map(|s| s.optimizer)
    else {
        return;
    };
    // This optimizer's steps that say how many of the earlier steps' losses are alive.
    let watched: Vec<&Step> = p
        .steps
        .iter()
        .filter(|s| s.optimizer == optimizer && s.losses_watched.is_some())
        .collect();
    let all_kept = |i: usize| {
        let s = watched[i];
        s.losses_watched.unwrap_or(0) >= LOSSES_KEPT && s.losses_alive.unwrap_or(0) >= LOSSES_KEPT
    };
    let Some(at) = (0..watched.len()).find(|&i| all_kept(i)) else {
        return;
    };
    let first = watched[at];
    let span = LOSSES_KEPT;
    let kept_to_end = (at..watched.len()).all(all_kept);
    let ours: Vec<&Step> = p
        .steps
        .iter()
        .filter(|s| s.optimizer == first.optimizer)
        .collect();
    // From the first step whose loss was watched, the first step's own allocations left out.
    let start = first.step.saturating_sub(LOSSES_KEPT).max(2);
    let kept_span: Vec<&Step> = ours.iter().copied().filter(|s| s.step >= start).collect();
    let memory = growth(&kept_span);
    let held = match memory {
        Some((bytes, steps)) if bytes > 0.0 => format!(
            "; memory grew by {:.1} MiB over the {steps} steps from step {start} ({:.1} KiB a \
             step)",
            bytes / MIB,
            bytes / 1024.0 / steps as f64
        ),
        _ => String::new(),
    };
    // Every kept loss backpropagated with retain_graph=True holds its step's saved activations;
    // after a plain backward only the graph's nodes (a few KiB a step: 12 KiB for a two-layer
    // ConvNet, against 1.4 MiB with the graph retained).
    let retained = first.losses_retained.unwrap_or(0) >= LOSSES_KEPT;
    let what = if retained {
        "their backward kept the graph (`retain_graph=True`), so each kept loss holds its step's \
         saved activations"
    } else {
        "the backward freed what their graphs saved, so each kept loss holds its graph's nodes \
         only (a few KiB a step), which still adds up over a long epoch or run"
    };
    let mut f = Finding::new(
        Symptom::LossGraphKept,
        Severity::Warn,
        "loss",
        first.step as f64,
    )
    .summary(format!(
        "at step {} the losses of the {span} steps before it were all still alive with their \
         autograd graph{}{held}: the program keeps each step's loss tensor itself (a list of \
         undetached losses for a log or an average); {what}; keep `loss.item()` or \
         `loss.detach()` instead",
        first.step,
        if kept_to_end {
            ", and at every step after"
        } else {
            ""
        },
    ))
    .number("steps_kept", span as f64)
    .number("graph_retained", if retained { 1.0 } else { 0.0 })
    .number("first_step", first.step as f64);
    if let Some((bytes, steps)) = memory {
        f = f
            .number("memory_growth_bytes", bytes)
            .number("memory_steps", steps as f64);
    }
    out.push(f);
}

/// (bytes, steps) from the first step with a memory reading to the last: device memory where
/// it was counted, else the resident set.
fn growth(steps: &[&Step]) -> Option<(f64, u64)> {
    let reading = |s: &&&Step| {
        s.memory
            .as_ref()
            .and_then(|m| m.allocated.or(m.rss))
            .map(|b| (s.step, b))
    };
    let first = steps.iter().find_map(|s| reading(&s))?;
    let last = steps.iter().rev().find_map(|s| reading(&s))?;
    (last.0 > first.0).then(|| (last.1 - first.1, last.0 - first.0))
}

/// What the heavy steps say of the loss's reduction, when every one that says anything says
/// it is a sum over the same number of terms: (elements, grad_fn, the step's batch rows).
fn summed(p: &Process, optimizer: u32) -> Option<(u64, String, Option<u64>)> {
    let said: Vec<&Step> = p
        .steps
        .iter()
        .filter(|s| s.optimizer == optimizer)
        .filter(|s| {
            s.loss_reduction
                .as_ref()
                .is_some_and(|r| r.reduction.is_some())
        })
        .collect();
    let first = said.first()?;
    let r = first.loss_reduction.as_ref()?;
    let elements = r.elements?;
    let all_sum = said.iter().all(|s| {
        s.loss_reduction
            .as_ref()
            .is_some_and(|x| x.reduction.as_deref() == Some("sum") && x.elements == Some(elements))
    });
    if !all_sum || elements < 2 {
        return None;
    }
    let grad_fn = r.grad_fn.clone().unwrap_or_default();
    let batch = first
        .input
        .as_ref()
        .and_then(|i| i.shape.first().copied())
        .filter(|b| *b > 0);
    // A `.sum()` sums whatever it is given: a sum of a few losses (a multi-task total) is not
    // a sum over the batch. Only one over the batch's rows (or rows x positions) is.
    if grad_fn.starts_with("Sum") && batch.is_none_or(|b| elements % b != 0) {
        return None;
    }
    Some((elements, grad_fn, batch))
}

/// `loss-summed`: the training loss sums its terms over the batch, with an optimizer whose
/// step scales with it. A warning when the steps were too large (one of [`UNSTABLE`]),
/// information otherwise (a learning rate chosen for the sum is legitimate). Runs after the
/// other findings of the process are in `out`.
pub(super) fn judge_summed(p: &Process, out: &mut Vec<Finding>) {
    let Some(opt) = p.optimizers.iter().min_by_key(|o| o.optimizer) else {
        return;
    };
    if !opt.manual && SCALE_FREE.contains(&opt.class.as_str()) {
        return;
    }
    let Some((n, grad_fn, batch)) = summed(p, opt.optimizer) else {
        return;
    };
    let how = if grad_fn.starts_with("Sum") {
        "`.sum()` of the per-element losses".to_string()
    } else {
        format!("reduction=\"sum\" ({grad_fn})")
    };
    let rows = batch
        .map(|b| {
            if n == b {
                format!(" (the batch's {b} rows)")
            } else {
                format!(" (batch {b} x {})", n / b.max(1))
            }
        })
        .unwrap_or_default();
    let lr = p
        .steps
        .iter()
        .find(|s| s.optimizer == opt.optimizer)
        .and_then(|s| s.lr);
    let lr_text = lr.map(|v| format!(" at lr {v:.3e}")).unwrap_or_default();
    let update = if opt.manual {
        "the hand-written update".to_string()
    } else {
        opt.class.clone()
    };
    let unstable: Vec<&'static str> = out
        .iter()
        .filter(|f| is_unstable(f))
        .map(|f| f.symptom.id())
        .collect();
    let detail =
        format!("the loss is a sum over {n} terms{rows}, not their mean: each step is {n}x a mean's (loss-summed)");
    for f in out.iter_mut().filter(|f| is_unstable(f)) {
        f.details.insert(0, detail.clone());
        f.details.truncate(crate::finding::MAX_DETAILS);
    }
    let (severity, tail) = if unstable.is_empty() {
        (
            Severity::Info,
            "; legitimate when the learning rate was chosen for the sum, and the steps here \
             were not too large"
                .to_string(),
        )
    } else {
        (
            Severity::Warn,
            format!(
                "; the steps were too large ({}): a learning rate tuned for a mean is {n}x too \
                 large for this sum; average the loss (reduction=\"mean\", or divide by the \
                 {n} terms) or divide the learning rate by {n}",
                unstable.join(", ")
            ),
        )
    };
    let site = p
        .loss_calls
        .iter()
        .find(|c| c.reduction.as_deref() == Some("sum") && c.grad_enabled != Some(false))
        .and_then(|c| c.location.clone());
    out.push(
        Finding::new(Symptom::LossSummed, severity, "loss", 1.0)
            .summary(format!(
                "the training loss is a sum over {n} terms{rows}, by {how}, not their mean: with \
                 {update}{lr_text} each step is {n}x the step of the mean at the same rate, and \
                 it grows with the batch{tail}"
            ))
            .number("elements", n as f64)
            .number("step_factor", n as f64)
            .number("batch", batch.map_or(f64::NAN, |b| b as f64))
            .number("learning_rate", lr.unwrap_or(f64::NAN))
            .at(site),
    );
}
