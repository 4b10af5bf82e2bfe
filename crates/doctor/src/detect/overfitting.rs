//! `overfitting`: a validation loss rises from its lowest point and stays up while the training
//! loss keeps falling. The step reported is the validation minimum: where the best checkpoint
//! is, and where the overfitting begins.

use super::Context;
use crate::finding::{Finding, Severity, Symptom};
use crate::robust::running_median;
use mldebug_text::number::num;

/// Fewer evaluations than this cannot show a minimum followed by a sustained rise.
const MIN_EVALS: usize = 4;

/// Evaluations after the minimum needed to call the rise sustained.
const MIN_EVALS_AFTER: usize = 2;

/// The validation loss must end at least this share above its minimum: 5% is beyond the
/// evaluation-to-evaluation wobble of a validation set of a few hundred samples.
const MIN_RISE: f64 = 0.05;

/// Validation curves of this many points or more are smoothed with a 3-point running median
/// first, so one unlucky evaluation is neither the minimum nor the rise.
const SMOOTH_FROM: usize = 6;

pub(crate) fn detect(cx: &Context, out: &mut Vec<Finding>) {
    let Some((train, _)) = &cx.train else { return };
    for e in &cx.evals {
        let pts: Vec<(f64, f64)> = e
            .points
            .iter()
            .copied()
            .filter(|p| p.1.is_finite())
            .collect();
        if pts.len() < MIN_EVALS {
            continue;
        }
        let raw: Vec<f64> = pts.iter().map(|p| p.1).collect();
        let v = if pts.len() >= SMOOTH_FROM {
            running_median(&raw, 1)
        } else {
            raw.clone()
        };
        let m = (0..v.len())
            .min_by(|&a, &b| v[a].total_cmp(&v[b]))
            .expect("non-empty");
        if v.len() - 1 - m < MIN_EVALS_AFTER {
            continue;
        }
        let low = v[m];
        let end = v[v.len() - 1];
        let threshold = low + MIN_RISE * low.abs();
        // Sustained: the last evaluations are all above the threshold.
        if !v[v.len() - MIN_EVALS_AFTER..]
            .iter()
            .all(|x| *x > threshold)
        {
            continue;
        }
        let (min_step, end_step) = (pts[m].0, pts[pts.len() - 1].0);
        let train_at_min = level_near(&train.points, min_step);
        let train_at_end = level_near(&train.points, end_step);
        let (Some(tm), Some(te)) = (train_at_min, train_at_end) else {
            continue;
        };
        if te > tm {
            continue; // both rise: the run diverges, which is another finding
        }
        let text = format!(
            "{} is lowest ({}) at step {} and rises to {} (+{}%) by step {} while {} falls \
             from {} to {}",
            e.name,
            num(low),
            num(min_step),
            num(end),
            num(100.0 * (end - low) / low.abs()),
            num(end_step),
            train.name,
            num(tm),
            num(te),
        );
        out.push(
            Finding::new(Symptom::Overfitting, Severity::Warn, &e.name, min_step)
                .summary(text)
                .number("eval_lowest", low)
                .number("eval_end", end)
                .number("train_at_lowest", tm)
                .number("train_at_end", te)
                .number("gap_at_lowest", low - tm)
                .number("gap_at_end", end - te),
        );
    }
}

/// The median training loss over the few points around `step` (a single logged training loss
/// is too noisy to compare).
fn level_near(points: &[(f64, f64)], step: f64) -> Option<f64> {
    let i = points.partition_point(|p| p.0 <= step);
    let lo = i.saturating_sub(3);
    let hi = (i + 2).min(points.len());
    let v = crate::robust::median(points[lo..hi].iter().map(|p| p.1));
    v.is_finite().then_some(v)
}
