//! `loss-zero`: the training loss is exactly, or all but exactly, 0 and stays there. Reached at
//! once it is a bug (every target masked, a loss that never reads its targets). Reached after a
//! gradual fall it is a loss that converged: an easy or small training set learned to the last
//! printed digit (or memorised, or leaking its labels, which only a held-out loss can tell), a
//! note and no alarm.

use super::Context;
use crate::finding::{Finding, Severity, Symptom};
use crate::robust::median;
use mldebug_text::number::num;

/// A loss at or below this is zero: the HF Trainer of transformers 4.x rounds the logged loss to
/// 4 decimals, so anything under half of the last digit prints as `0.0` (5.x logs it unrounded,
/// and a loss that small is zero for this purpose all the same).
const LOSS_ZERO_ABS: f64 = 5e-5;

/// Zero within this many logged points of the start is zero "from the start".
const EARLY_POINTS: usize = 3;

/// A drop to zero from at least this share of the starting loss within one logging interval is
/// abrupt: a loss that is learned falls gradually through every order of magnitude.
const ABRUPT_SHARE: f64 = 0.1;

pub(crate) fn detect(cx: &Context, out: &mut Vec<Finding>) {
    let Some((s, _)) = &cx.train else { return };
    if out
        .iter()
        .any(|f| f.symptom == Symptom::LossNonfinite && f.metric == s.name)
    {
        return; // a zero that stands for NaN is reported as what it is
    }
    let pts: Vec<(f64, f64)> = s
        .points
        .iter()
        .copied()
        .filter(|p| p.1.is_finite())
        .collect();
    let Some(k) = pts.iter().position(|p| p.1.abs() <= LOSS_ZERO_ABS) else {
        return;
    };
    // It must stay at zero: the median of what follows is zero too.
    let rest = median(pts[k..].iter().map(|p| p.1.abs()));
    if rest > LOSS_ZERO_ABS {
        return;
    }
    let zeros = pts[k..]
        .iter()
        .filter(|p| p.1.abs() <= LOSS_ZERO_ABS)
        .count();
    let start = pts[0].1;
    let prev = k.checked_sub(1).map(|i| pts[i]);
    let abrupt = prev.is_some_and(|p| p.1 >= ABRUPT_SHARE * start.abs());
    let early = k < EARLY_POINTS;
    let (severity, why) = if early || abrupt {
        (
            Severity::Fail,
            "reached at once: nothing is being learned from the targets",
        )
    } else {
        (
            Severity::Info,
            "reached after a gradual fall: the loss converged; a concern only if the held-out \
             loss did not follow it down (a memorised training set, or labels that leak)",
        )
    };
    let step = pts[k].0;
    let text = format!(
        "{} is 0 from step {} ({zeros} of {} points from there; {why}){}",
        s.name,
        num(step),
        pts.len() - k,
        prev.map_or(String::new(), |p| format!(
            "; {} at step {} before",
            num(p.1),
            num(p.0)
        )),
    );
    out.push(
        Finding::new(Symptom::LossZero, severity, &s.name, step)
            .summary(text)
            .number("first_value", start)
            .number("value_before", prev.map_or(f64::NAN, |p| p.1))
            .number("zero_points", zeros as f64),
    );
}
