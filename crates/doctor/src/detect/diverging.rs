//! `loss-diverging`: the training loss rises and stays up: a sustained rise of its trend from
//! its lowest point, not a spike that recovers (that is `loss-spikes`).

use super::Context;
use crate::finding::{Finding, Severity, Symptom};
use mldebug_text::number::num;

/// The trend must end at least this share above its lowest level: a quarter is far beyond the
/// drift of a healthy run at its noise floor, and well within what a blow-up shows.
const DIVERGE_MIN_RISE: f64 = 0.25;

/// …and at least this many noise scales above it, so a rise inside the batch-to-batch noise of
/// a tiny loss is not a finding.
const DIVERGE_MIN_SIGMAS: f64 = 4.0;

/// Of the trend after the rise begins, at least this share must stay off the lowest level: the
/// rise is sustained, not a bump the run recovers from.
const SUSTAINED_SHARE: f64 = 0.7;

/// The level the run ends at is the median of this share of its last points (at least
/// [`TAIL_MIN`]).
const TAIL_SHARE: f64 = 0.1;
const TAIL_MIN: usize = 3;

/// The start is the median of this share of the first points (at least [`TAIL_MIN`]).
const HEAD_SHARE: f64 = 0.1;

pub(crate) fn detect(cx: &Context, out: &mut Vec<Finding>) {
    let Some((s, t)) = cx.train_trend() else {
        return;
    };
    let m = t.argmin();
    let low = t.level[m];
    let end = t.tail(TAIL_SHARE, TAIL_MIN);
    let start = t.head(HEAD_SHARE, TAIL_MIN);
    let rise = end - low;
    let sigma = t.noise[m];
    if !(rise > DIVERGE_MIN_RISE * low.abs() && rise > DIVERGE_MIN_SIGMAS * sigma) {
        return;
    }
    // A loss that goes below zero has no zero to measure a rise against: a policy-gradient
    // surrogate (−log π · advantage) falls and then returns to 0 as the policy settles, a
    // Gaussian likelihood or an ELBO drifts by its own constants. Such a loss diverges only
    // once it ends above zero by more than it ever was below it.
    if low < 0.0 && end <= low.abs() {
        return;
    }
    // The rise begins where the trend leaves its lowest level by more than its noise.
    let leave = low + (DIVERGE_MIN_SIGMAS * sigma).min(0.25 * rise);
    let Some(onset) = (m..t.len()).find(|&i| t.level[i] > leave) else {
        return;
    };
    let after = &t.level[onset..];
    let above = after.iter().filter(|v| **v > leave).count();
    if (above as f64) < SUSTAINED_SHARE * after.len() as f64 {
        return;
    }
    let lost_all = end >= start;
    let severity = if low < 0.0 {
        Severity::Warn
    } else if lost_all || rise >= low.abs() {
        Severity::Fail
    } else {
        Severity::Warn
    };
    let text = format!(
        "{} rises from its lowest {} at step {} to {} at the end ({}×){}",
        s.name,
        num(low),
        num(t.steps[m]),
        num(end),
        num(end / low),
        if m == 0 {
            ": it rises from the start".to_string()
        } else if lost_all {
            format!("; above where it started ({})", num(start))
        } else {
            String::new()
        }
    );
    out.push(
        Finding::new(Symptom::LossDiverging, severity, &s.name, t.steps[onset])
            .summary(text)
            .number("lowest", low)
            .number("lowest_step", t.steps[m])
            .number("end", end)
            .number("start", start)
            .number("rise_ratio", end / low),
    );
}
