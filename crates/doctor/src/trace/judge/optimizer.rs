//! The training loop around the optimizer: gradients that are never reset, steps that change
//! nothing, optimizers over other tensors, parameters no optimizer holds, parameters without a
//! gradient, and a model that is mostly frozen.
//!
//! The update may be a `torch.optim` optimizer's or hand-written (the `optimizer` record says
//! `manual`: its steps run from a backward to the next forward with gradients); the invariants
//! are the same (parameters that get gradients change after an update, gradients are reset
//! between updates), only the words differ.

use super::clipping::applied_grad_norm;
use super::{hand_written, main_model, pct};
use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;

/// A step whose relative update ‖Δw‖/‖w‖ is below this changed nothing that matters: an fp32
/// weight moves by at least one part in 10^7 per changed element, and the smallest useful
/// learning rates give ratios near 1e-6 and up.
const NEGLIGIBLE_UPDATE: f64 = 1e-9;

/// A step that moves the weights by less than this share of their norm (‖Δw‖/‖w‖, the median
/// over the steps watched) trains nothing in a run's time: a thousand such steps move the weights
/// by 0.1% of their norm, where training moves them by a sizeable share of it (healthy ratios
/// are about 1e-4 to 1e-2 a step). Far above float32's resolution (6e-8), so the step does land:
/// it is just too small to matter.
const SMALL_UPDATE: f64 = 1e-6;
/// … over at least this many steps after the first.
const SMALL_UPDATE_STEPS: usize = 5;

/// A model training less than this share of its parameters or of its parameter tensors, without
/// adapters, is mostly frozen: a warning, since a linear probe or a head-only fine-tune trains
/// that little on purpose.
const FROZEN_SHARE: f64 = 0.10;

/// A learning rate this small is zero for an fp32 weight …
const ZERO_LR: f64 = 1e-12;
/// … and a run whose rate stays there for its last steps, this many or more, has stopped
/// training (a schedule stepped per batch where it was written per epoch, a decay to 0).
const ZERO_LR_STEPS: usize = 5;

/// At most this many parameter names in a summary line (the details list more).
const NAMES_IN_SUMMARY: usize = 3;

pub(super) fn judge(p: &Process, out: &mut Vec<Finding>) {
    accumulating(p, out);
    unchanged(p, out);
    other_tensors(p, out);
    not_optimized(p, out);
    no_gradient(p, out);
    frozen(p, out);
}

fn optimizer_site(p: &Process) -> Option<String> {
    p.optimizers.first().and_then(|o| o.location.clone())
}

/// `grads-accumulate`: the first backward after a step found the previous step's gradients.
fn accumulating(p: &Process, out: &mut Vec<Finding>) {
    let known: Vec<_> = p
        .steps
        .iter()
        .filter(|s| {
            matches!(
                s.grads_before_backward.as_deref(),
                Some("carried" | "zeroed" | "none")
            )
        })
        .collect();
    let carried: Vec<_> = known
        .iter()
        .filter(|s| s.grads_before_backward.as_deref() == Some("carried"))
        .collect();
    // Half the measured steps: a loop that resets on some code paths only still shows it.
    if carried.is_empty() || 2 * carried.len() < known.len() {
        return;
    }
    let first = carried[0].step;
    out.push(
        Finding::new(
            Symptom::GradsAccumulate,
            Severity::Fail,
            "gradients",
            first as f64,
        )
        .summary(if hand_written(p) {
            format!(
                "gradients carry over from one hand-written update into the next at {} of {} \
                 steps: nothing resets them (call model.zero_grad() once per update)",
                carried.len(),
                known.len()
            )
        } else {
            format!(
                "gradients carry over from one optimizer step into the next at {} of {} steps: \
                 nothing resets them (call optimizer.zero_grad() once per step)",
                carried.len(),
                known.len()
            )
        })
        .number("steps_carried", carried.len() as f64)
        .number("steps_measured", known.len() as f64)
        .at(optimizer_site(p)),
    );
}

/// `step-changes-nothing`: every compared step left the optimizer's tensors as they were.
fn unchanged(p: &Process, out: &mut Vec<Finding>) {
    if zero_rate(p, out) {
        return;
    }
    let measured: Vec<_> = p
        .steps
        .iter()
        .filter(|s| s.checked.is_some_and(|c| c > 0))
        .collect();
    if measured.is_empty() {
        return;
    }
    let still = |s: &&&crate::trace::records::Step| {
        s.changed == Some(0) || s.update_ratio.is_some_and(|r| r < NEGLIGIBLE_UPDATE)
    };
    if !measured.iter().all(|s| still(&s)) {
        too_small(p, out);
        return;
    }
    let s = measured[measured.len() - 1];
    let lr = s.lr.unwrap_or(f64::NAN);
    let grad = applied_grad_norm(p, s).unwrap_or(f64::NAN);
    let summary = if hand_written(p) {
        format!(
            "no parameter changed between a backward and the next forward at each of the {} \
             steps compared: the gradients are computed, but nothing applies them (there is no \
             torch.optim optimizer, and no hand-written update changed a weight)",
            measured.len()
        )
    } else {
        format!(
            "the optimizer step changed nothing at each of the {} steps compared: {}",
            measured.len(),
            why_unchanged(s, lr, grad)
        )
    };
    out.push(
        Finding::new(
            Symptom::StepChangesNothing,
            Severity::Fail,
            "optimizer",
            s.step as f64,
        )
        .summary(summary)
        .number("steps_compared", measured.len() as f64)
        .number("tensors_changed", s.changed.unwrap_or(0) as f64)
        .number("update_ratio", s.update_ratio.unwrap_or(f64::NAN))
        .number("learning_rate", lr)
        .number("grad_norm", grad)
        .at(optimizer_site(p)),
    );
}

/// Why an optimizer's step changed nothing, from what its last compared step shows.
fn why_unchanged(s: &crate::trace::records::Step, lr: f64, grad: f64) -> String {
    if lr == 0.0 {
        "the learning rate is 0".to_string()
    } else if s.with_grad == Some(0) {
        "none of its tensors has a gradient: it holds tensors the loss does not use".to_string()
    } else if grad.is_finite() && grad < 1e-12 {
        format!("the gradients it sees are {grad:.1e} in norm (clipped to nothing?)")
    } else {
        "its update is too small to change a weight".to_string()
    }
}

/// `step-changes-nothing` at warn: the steps change the weights, but by so little against
/// their norm that no run trains with them ([`SMALL_UPDATE`]), whatever the cause: a clip far
/// too tight, a learning rate orders too small. Judged on the median of the steps after the
/// first (a warm-up starts at 0), leaving out closure steps (a line search that has converged
/// moves little on purpose).
fn too_small(p: &Process, out: &mut Vec<Finding>) {
    let mut ratios: Vec<(u64, f64)> = p
        .steps
        .iter()
        .skip(1)
        .filter(|s| !s.closure && s.lr.is_none_or(|lr| lr > 0.0))
        .filter_map(|s| Some((s.step, s.update_ratio?)))
        .filter(|(_, r)| r.is_finite())
        .collect();
    if ratios.len() < SMALL_UPDATE_STEPS {
        return;
    }
    let n = ratios.len();
    ratios.sort_by(|a, b| a.1.total_cmp(&b.1));
    let median = ratios[n / 2].1;
    if median >= SMALL_UPDATE {
        return;
    }
    let s = p.steps.last().expect("steps were measured");
    let grad = applied_grad_norm(p, s).unwrap_or(f64::NAN);
    let lr = s.lr.unwrap_or(f64::NAN);
    out.push(
        Finding::new(
            Symptom::StepChangesNothing,
            Severity::Warn,
            "optimizer",
            ratios[0].0 as f64,
        )
        .summary(format!(
            "each step moves the weights by {median:.1e} of their norm (the median of {n} steps): \
             at that rate a thousand steps move them by {:.2}%, so nothing trains in the time a \
             run has; {}",
            100.0 * median * 1000.0,
            if grad.is_finite() && lr.is_finite() {
                format!(
                    "the learning rate is {lr:.1e} and the gradients' norm {grad:.1e} (a clip far \
                     too tight, or a learning rate orders too small)"
                )
            } else {
                "a clip far too tight, or a learning rate orders too small".to_string()
            }
        ))
        .number("median_update_ratio", median)
        .number("steps_compared", n as f64)
        .number("learning_rate", lr)
        .number("grad_norm", grad)
        .at(optimizer_site(p)),
    );
}

/// `step-changes-nothing` from the learning rate alone: zero for the last steps watched.
fn zero_rate(p: &Process, out: &mut Vec<Finding>) -> bool {
    let tail: Vec<_> = p
        .steps
        .iter()
        .rev()
        .take_while(|s| s.lr.is_some_and(|lr| lr.abs() < ZERO_LR))
        .collect();
    if tail.len() < ZERO_LR_STEPS {
        return false;
    }
    let from = tail[tail.len() - 1].step;
    let before = p
        .steps
        .iter()
        .take_while(|s| s.step < from)
        .filter_map(|s| s.lr)
        .last();
    out.push(
        Finding::new(Symptom::StepChangesNothing, Severity::Fail, "learning_rate", from as f64)
            .summary(format!(
                "the learning rate is 0 from step {from} on ({} steps watched){}: every step \
                                after it changes nothing (a schedule stepped per batch where it counts epochs,                  a decay that reaches 0 too early)",
                tail.len(),
                before.map(|b| format!(", after {b:.3e} at the step before")).unwrap_or_default()
            ))
            .number("from_step", from as f64)
            .number("steps_at_zero", tail.len() as f64)
            .at(optimizer_site(p)),
    );
    true
}

/// `optimizer-not-model`: an optimizer whose tensors are none of the trained model's.
fn other_tensors(p: &Process, out: &mut Vec<Finding>) {
    if p.models.is_empty() {
        return;
    }
    for o in &p.optimizers {
        if o.numel == 0 || o.not_in_models == 0 {
            continue;
        }
        let severity = if o.in_models == 0 {
            Severity::Fail
        } else {
            Severity::Info
        };
        let summary = if o.in_models == 0 {
            format!(
                "the {} optimizer holds {} elements, none of them a parameter of the model that \
                 runs forward: it trains other tensors (a copy of the model, another instance)",
                o.class, o.numel
            )
        } else {
            format!(
                "the {} optimizer holds {} elements that are not parameters of the model that runs \
                 forward (besides {} that are)",
                o.class, o.not_in_models, o.in_models
            )
        };
        out.push(
            Finding::new(Symptom::OptimizerNotModel, severity, "optimizer", 1.0)
                .summary(summary)
                .number("elements_not_in_model", o.not_in_models as f64)
                .number("elements_in_model", o.in_models as f64)
                .at(o.location.clone()),
        );
    }
}

/// `params-not-optimized`: trainable parameters with a gradient that no optimizer holds.
fn not_optimized(p: &Process, out: &mut Vec<Finding>) {
    let Some(g) = p.grads.iter().find(|g| !g.not_in_optimizer.is_empty()) else {
        return;
    };
    let names = &g.not_in_optimizer;
    out.push(
        Finding::new(
            Symptom::ParamsNotOptimized,
            Severity::Fail,
            "optimizer",
            g.step as f64,
        )
        .summary(format!(
            "{} parameter tensor(s) get gradients but no optimizer holds them ({}{}): they \
                 never train",
            names.len(),
            names
                .iter()
                .take(NAMES_IN_SUMMARY)
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
            if names.len() > NAMES_IN_SUMMARY {
                ", ..."
            } else {
                ""
            }
        ))
        .number("tensors", names.len() as f64)
        .number("elements", g.not_in_optimizer_numel as f64)
        .details(names.iter().cloned())
        .at(optimizer_site(p)),
    );
}

/// `no-gradient`: trainable parameters with no gradient, or an all-zero one, at the first step.
fn no_gradient(p: &Process, out: &mut Vec<Finding>) {
    let lora = main_model(p).is_some_and(|m| m.lora > 0);
    let Some(g) = p.grads.iter().min_by_key(|g| g.step) else {
        return;
    };
    let names: Vec<String> = g
        .no_grad
        .iter()
        // A LoRA A matrix gets a zero gradient at the first step by design (its B starts at 0).
        .filter(|n| !(lora && n.contains("lora_A")))
        .cloned()
        .collect();
    let zero: u64 = g.groups.iter().map(|x| x.zero_grad).sum();
    let zero = if lora { 0 } else { zero };
    if names.is_empty() && zero == 0 {
        return;
    }
    let tensors: u64 = g.groups.iter().map(|x| x.tensors).sum();
    let (severity, summary) =
        if !names.is_empty() {
            (
                Severity::Fail,
                format!(
                "{} trainable parameter tensor(s) got no gradient at step {}: the loss does not \
                 reach them (a .detach(), a torch.no_grad() block, a branch the forward skips): {}",
                names.len(),
                g.step,
                names.iter().take(NAMES_IN_SUMMARY).cloned().collect::<Vec<_>>().join(", ")
            ),
            )
        } else {
            (
                Severity::Warn,
                format!(
                "{zero} trainable parameter tensor(s) got an all-zero gradient at step {} (dead \
                 units, a multiplication by zero, a masked branch)",
                g.step
            ),
            )
        };
    let groups: Vec<String> = g
        .groups
        .iter()
        .filter(|x| x.no_grad > 0 || x.zero_grad > 0)
        .map(|x| {
            format!(
                "{}: {} of {} tensors without a gradient",
                x.name,
                x.no_grad + x.zero_grad,
                x.tensors
            )
        })
        .collect();
    out.push(
        Finding::new(Symptom::NoGradient, severity, "gradients", g.step as f64)
            .summary(summary)
            .number("tensors_without_gradient", names.len() as f64)
            .number("tensors_zero_gradient", zero as f64)
            .number("tensors", tensors as f64)
            .details(groups),
    );
}

/// `mostly-frozen`: little of the model that trains is trainable, or a LoRA wrap that found no
/// layer.
fn frozen(p: &Process, out: &mut Vec<Finding>) {
    let Some(m) = main_model(p) else { return };
    if m.parameters == 0 {
        return;
    }
    let share = m.trainable as f64 / m.parameters as f64;
    let peft =
        m.module.as_deref().is_some_and(|x| x.starts_with("peft")) || m.class.starts_with("Peft");
    let (severity, summary) = if peft && m.lora == 0 {
        (
            Severity::Fail,
            format!(
                "the model is wrapped for LoRA but has no LoRA layer: target_modules matched no \
                 module, and {} of its parameters train",
                pct(share)
            ),
        )
    } else if m.lora == 0
        && (share < FROZEN_SHARE
            || (m.tensors > 0 && (m.trainable_tensors as f64) < FROZEN_SHARE * m.tensors as f64))
    {
        (
            Severity::Warn,
            format!(
                "only {} of the model's parameters train ({} of {}, in {} of its {} tensors): \
                 most layers are frozen (requires_grad=False); if that is not the plan, look at \
                 the loop that sets requires_grad",
                pct(share),
                m.trainable,
                m.parameters,
                m.trainable_tensors,
                m.tensors
            ),
        )
    } else {
        return;
    };
    let frozen: Vec<String> = p
        .grads
        .iter()
        .find(|g| g.model == m.model)
        .map(|g| g.frozen_names.clone())
        .unwrap_or_default();
    out.push(
        Finding::new(Symptom::MostlyFrozen, severity, "parameters", 1.0)
            .summary(summary)
            .number("trainable_share", share)
            .number("trainable", m.trainable as f64)
            .number("parameters", m.parameters as f64)
            .details(frozen)
            .at(m.location.clone()),
    );
}
