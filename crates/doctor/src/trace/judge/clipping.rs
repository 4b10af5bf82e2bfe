//! The program's own gradient clipping, from the `clips` of the `step` records.
//!
//! `clip-before-unscale`: a clip whose threshold was compared with gradients still multiplied
//! by a GradScaler's scale (the invariant: a clip threshold is compared with the true gradient
//! norm). And the clip used by the other judgements: a `grad-norm-explosion` whose every jump the
//! program's clip cut is information, not a warning; a hand-written update's gradient norm is
//! read after the program's clip (its `grad_norm` is measured before it).

use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;
use crate::trace::records::{Clip, Step};

/// A clip that shrinks the gradients by more than this factor at the median step rules every
/// step: under SGD that divides the learning rate by as much (a hundredth of it trains in a run
/// what a hundred runs would), and under Adam every gradient is rescaled to the same tiny norm,
/// which brings it near Adam's epsilon (1e-8 per element) for a large model. A clip that cuts
/// less still compares the wrong number, but the damage is bounded: a warning.
const CUT_FAIL: f64 = 100.0;

pub(super) fn judge(p: &Process, out: &mut Vec<Finding>) {
    before_unscale(p, out);
}

/// A clip of the 2-norm whose numbers are known: (threshold, norm before the clip).
fn norm_clip(c: &Clip) -> Option<(f64, f64)> {
    let (t, n) = (c.threshold?, c.norm?);
    let two = c.norm_type.is_none_or(|x| x == 2.0);
    (c.kind == "norm" && two && t > 0.0 && t.is_finite() && n.is_finite()).then_some((t, n))
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `clip-before-unscale`.
fn before_unscale(p: &Process, out: &mut Vec<Finding>) {
    let clipped: Vec<(&Step, &Clip)> = p
        .steps
        .iter()
        .flat_map(|s| s.clips.iter().map(move |c| (s, c)))
        .collect();
    let scaled: Vec<&(&Step, &Clip)> = clipped.iter().filter(|(_, c)| c.scaled).collect();
    let Some((first, c0)) = scaled.first() else {
        return;
    };
    let steps_clipping = {
        let mut v: Vec<u64> = clipped.iter().map(|(s, _)| s.step).collect();
        v.dedup();
        v.len()
    };
    let steps_scaled = {
        let mut v: Vec<u64> = scaled.iter().map(|(s, _)| s.step).collect();
        v.dedup();
        v.len()
    };
    let threshold = c0.threshold.unwrap_or(f64::NAN);
    let scale = median(scaled.iter().filter_map(|(_, c)| c.scale).collect());
    let cuts: Vec<f64> = scaled
        .iter()
        .filter_map(|(_, c)| norm_clip(c).map(|(t, n)| n / t))
        .collect();
    let cut = median(cuts.clone());
    let true_norm = median(
        scaled
            .iter()
            .filter_map(|(_, c)| Some(norm_clip(c)?.1 / c.scale.filter(|s| *s > 0.0)?))
            .collect(),
    );
    let function = if c0.kind == "value" {
        "clip_grad_value_"
    } else {
        "clip_grad_norm_"
    };
    let severity = if cut > CUT_FAIL {
        Severity::Fail
    } else {
        Severity::Warn
    };
    let effect = if cut.is_finite() {
        let shrink = if cut > 1.0 {
            format!(
                "it shrinks every step's gradients {} (the median of {} clips)",
                times(cut),
                cuts.len()
            )
        } else {
            "it does not cut them today, but only because the scale is small enough".to_string()
        };
        format!(
            "their true norm is {true_norm:.2e} (the median), so {shrink}: under SGD a learning \
             rate divided by that much, under Adam every gradient rescaled to the same tiny norm"
        )
    } else {
        "each gradient element is clamped to the threshold divided by the scale".to_string()
    };
    out.push(
        Finding::new(
            Symptom::ClipBeforeUnscale,
            severity,
            "gradients",
            first.step as f64,
        )
        .summary(format!(
            "{function}(…, {threshold}) runs before scaler.unscale_(optimizer) at {steps_scaled} \
             of the {steps_clipping} steps that clip: it compares {threshold} with gradients \
             still multiplied by the GradScaler's scale ({scale:.0}), so on the true gradients \
             the threshold is {:.1e}; {effect}. Call scaler.unscale_(optimizer) before the clip",
            threshold / scale
        ))
        .number("threshold", threshold)
        .number("scale", scale)
        .number("effective_threshold", threshold / scale)
        .number("true_norm", true_norm)
        .number("cut", cut)
        .number("steps_scaled", steps_scaled as f64)
        .number("steps_clipping", steps_clipping as f64),
    );
}

fn times(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}×")
    } else {
        format!("{x:.1}×")
    }
}

/// The gradients' norm the update used at a step: a hand-written update's `grad_norm` is taken
/// before the program's clip, so its 2-norm clip (unscaled, over all the tensors, with its
/// numbers known) is applied to it; an optimizer's is taken at its step, after any clip.
pub(super) fn applied_grad_norm(p: &Process, s: &Step) -> Option<f64> {
    let g = s.grad_norm?;
    if !super::hand_written(p) {
        return Some(g);
    }
    // A clip of part of the tensors (the encoder only) says nothing of the whole norm.
    let whole = |c: &&Clip| s.with_grad.is_none_or(|n| c.tensors >= n);
    let factor = s
        .clips
        .iter()
        .filter(|c| !c.scaled)
        .filter(whole)
        .filter_map(norm_clip)
        .filter(|(_, n)| *n > 0.0)
        .map(|(t, n)| (t / n).min(1.0))
        .fold(1.0, f64::min);
    Some(g * factor)
}

/// A `grad-norm-explosion` warning made of jumps only (no sustained growth, nothing
/// non-finite) at steps where the program's own 2-norm clip cut the gradients: no update saw
/// more than the clip's threshold, so it is information (the gradients spike, and the clip is
/// doing the work it is there for).
pub(super) fn clipped_jumps(p: &Process, out: &mut [Finding]) {
    for f in out.iter_mut().filter(|f| {
        f.symptom == Symptom::GradNormExplosion
            && f.severity == Severity::Warn
            && f.get("jumps").is_some_and(|j| j > 0.0)
            && !f.get("growth_ratio").is_some_and(f64::is_finite)
            && !f.get("nonfinite").is_some_and(|n| n > 0.0)
    }) {
        let jumps: Vec<f64> = if f.marks.is_empty() {
            vec![f.step]
        } else {
            f.marks.clone()
        };
        let cut_at = |step: f64| -> Option<f64> {
            p.steps
                .iter()
                .filter(|s| s.step as f64 == step)
                .flat_map(|s| s.clips.iter())
                .filter(|c| !c.scaled)
                .filter_map(norm_clip)
                .find(|(t, n)| n > t)
                .map(|(t, _)| t)
        };
        let thresholds: Vec<f64> = jumps.iter().filter_map(|s| cut_at(*s)).collect();
        if thresholds.len() < jumps.len() {
            continue;
        }
        let threshold = thresholds.iter().copied().fold(f64::NAN, f64::max);
        f.severity = Severity::Info;
        f.summary = format!(
            "{}; the program's own clip_grad_norm_ cut the gradients to a norm of {threshold} at \
             {}, so no update saw more than that",
            f.summary,
            if jumps.len() == 1 {
                "that step"
            } else {
                "each of those steps"
            }
        );
    }
}
