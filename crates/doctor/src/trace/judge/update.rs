//! `update-too-large`: an optimizer step that moves a module group's weights by a large share
//! of their own norm, ‖Δw‖/‖w‖ (‖w‖ before the step), on the heavy steps' `grads` records.
//! The too-small side is `step-changes-nothing` (optimizer.rs). A closure optimizer's steps
//! (L-BFGS: several iterations in one call) are not held to it.

use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;
use crate::trace::records::Grads;
use std::collections::BTreeMap;

/// A step that moves a group by more than twice its own weight norm has replaced the weights
/// rather than refined them. The usual guide is about 1e-3 per step (CS231n, `mldebug show
/// update-ratio`), but adaptive optimizers move every weight by about the learning rate at their
/// first steps, so small layers trained well sit far above it: measured on every clean script
/// of the run zoo on two seeds, the largest ratio was 0.50 (Adagrad at lr 0.05 on a 32-wide
/// head), most stay below 0.15; Adam at lr 1.0 on an MLP gives 5 to 30.
pub(super) const UPDATE_TOO_LARGE: f64 = 2.0;

/// A group whose weights were (nearly) all zero before the optimizer's first step, such as a
/// zero-initialised positional table or adapter, has no scale of its own to compare an update
/// with: at its next step any update is of the order of its whole norm.
const NEGLIGIBLE_WEIGHT: f64 = 1e-6;

/// At most this many groups named in the summary line (the details list more).
const GROUPS_IN_SUMMARY: usize = 3;

/// One group's ratio at one step.
struct Ratio {
    name: String,
    ratio: f64,
    update: f64,
    weight: f64,
}

pub(super) fn judge(p: &Process, out: &mut Vec<Finding>) {
    let initial = initial_norms(&p.grads);
    let mut records: Vec<&Grads> = p.grads.iter().collect();
    records.sort_by_key(|g| (g.step, g.optimizer, g.model));
    for g in records {
        // A closure optimizer's step (L-BFGS) runs up to max_iter iterations of its own, each
        // sized by a line search or curvature: their sum is not one gradient step, and the
        // bound, made for one, does not apply.
        if closure_step(p, g) {
            continue;
        }
        let mut over: Vec<Ratio> = ratios(g, &initial)
            .into_iter()
            .filter(|r| r.ratio > UPDATE_TOO_LARGE)
            .collect();
        if over.is_empty() {
            continue;
        }
        over.sort_by(|a, b| b.ratio.total_cmp(&a.ratio));
        out.push(finding(p, g, &over));
        return;
    }
}

fn closure_step(p: &Process, g: &Grads) -> bool {
    p.steps
        .iter()
        .any(|s| s.optimizer == g.optimizer && s.step == g.step && s.closure)
}

/// Each (optimizer, model, group)'s weight norm before the first step that measured it.
fn initial_norms(grads: &[Grads]) -> BTreeMap<(u32, u32, &str), f64> {
    let mut first: BTreeMap<(u32, u32, &str), (u64, f64)> = BTreeMap::new();
    for g in grads {
        for x in &g.groups {
            let Some(w) = x.weight_norm_before else {
                continue;
            };
            let key = (g.optimizer, g.model, x.name.as_str());
            let e = first.entry(key).or_insert((g.step, w));
            if g.step < e.0 {
                *e = (g.step, w);
            }
        }
    }
    first.into_iter().map(|(k, (_, w))| (k, w)).collect()
}

/// The finite ratios of one record's groups whose weights had a scale at the first step.
fn ratios(g: &Grads, initial: &BTreeMap<(u32, u32, &str), f64>) -> Vec<Ratio> {
    g.groups
        .iter()
        .filter(|x| x.tensors > x.frozen)
        .filter(|x| {
            initial
                .get(&(g.optimizer, g.model, x.name.as_str()))
                .is_some_and(|w| *w > NEGLIGIBLE_WEIGHT)
        })
        .filter_map(|x| {
            let (u, w) = (x.update_norm?, x.weight_norm_before?);
            let ratio = u / w;
            (ratio.is_finite() && w > NEGLIGIBLE_WEIGHT).then(|| Ratio {
                name: x.name.clone(),
                ratio,
                update: u,
                weight: w,
            })
        })
        .collect()
}

fn finding(p: &Process, g: &Grads, over: &[Ratio]) -> Finding {
    let opt = p.optimizers.iter().find(|o| o.optimizer == g.optimizer);
    let class = opt.map_or("optimizer", |o| o.class.as_str());
    let lr = p
        .steps
        .iter()
        .find(|s| s.optimizer == g.optimizer && s.step == g.step)
        .and_then(|s| s.lr);
    let measured = ratios(g, &initial_norms(&p.grads)).len();
    let named: Vec<String> = over
        .iter()
        .take(GROUPS_IN_SUMMARY)
        .map(|r| format!("{} {:.2}", r.name, r.ratio))
        .collect();
    let more = if over.len() > GROUPS_IN_SUMMARY {
        ", ..."
    } else {
        ""
    };
    let lr_text = lr.map(|v| format!(" at lr {v:.3e}")).unwrap_or_default();
    Finding::new(
        Symptom::UpdateTooLarge,
        Severity::Warn,
        "update_ratio",
        g.step as f64,
    )
    .summary(format!(
        "step {} of the {class}{lr_text} moved {} of {} module groups by more than {:.0}× \
             their own weight norm (‖Δw‖/‖w‖: {}{more}; about 1e-3 is usual): the first steps \
             rewrite the weights, so the learning rate is likely far too high for this optimizer",
        g.step,
        over.len(),
        measured,
        UPDATE_TOO_LARGE,
        named.join(", ")
    ))
    .number("max_update_ratio", over[0].ratio)
    .number("bound", UPDATE_TOO_LARGE)
    .number("groups_over", over.len() as f64)
    .number("groups_measured", measured as f64)
    .number("learning_rate", lr.unwrap_or(f64::NAN))
    .details(over.iter().map(|r| {
        format!(
            "{}: ‖Δw‖/‖w‖ {:.3} (‖Δw‖ {:.3e}, ‖w‖ before the step {:.3e})",
            r.name, r.ratio, r.update, r.weight
        )
    }))
    .at(opt.and_then(|o| o.location.clone()))
}
