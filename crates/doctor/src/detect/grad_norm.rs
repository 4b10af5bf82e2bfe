//! `grad-norm-explosion`: the gradient norm jumps far above its trend and past twice the highest
//! level it had run at (and whether a loss spike or blow-up follows; one jump with no loss
//! trouble after it is information), grows by an order of magnitude and stays there, turns
//! non-finite, or sits
//! above the clipping threshold on nearly every step (clipping saturated: the gradients are
//! always larger than the threshold; under SGD every step then moves the learning rate times the
//! threshold whatever the gradient, and Adam's update does not scale with the gradient at all,
//! so clipping does not make a learning rate that is too high safe in either).

use super::{Context, MIN_POINTS};
use crate::finding::{Finding, Severity, Symptom};
use crate::names::MAX_GRAD_NORM_KEYS;
use crate::robust::{logging_interval, median, Trend};
use mldebug_text::number::num;

/// A jump is at least this multiple of the trend: healthy grad norms vary by a factor of two or
/// three from batch to batch, an exploding step by ten or more.
const JUMP_RATIO: f64 = 5.0;
/// …and this many noise scales above it (see `loss-spikes`).
const JUMP_Z: f64 = 6.0;

/// …and above this multiple of the highest level the trend has had so far. The trend is a
/// running median, and a healthy run's batches reach about twice it (the batch-to-batch spread
/// of two or three above): a norm under twice the level the run already trained at is a batch
/// gradient of a kind its early steps took without harm, not an explosion, however far the
/// trend has fallen since (a converged loss makes the gradients collapse by orders of
/// magnitude, and one harder batch brings them back towards where they started).
const ABOVE_HIGHEST: f64 = 2.0;

/// A loss problem within this many loss-logging intervals after a jump follows from it.
const LEAD_INTERVALS: f64 = 3.0;

/// The trend ending this many times above its lowest level is sustained growth.
const GROWTH_RATIO: f64 = 10.0;

/// Clipping is saturated when this share of steps are clipped: the logged norm then says only
/// that the gradients stay above the threshold, not how large the updates are.
const CLIPPED_SHARE: f64 = 0.9;

/// A logged norm within this share of the threshold counts as clipped (logs that record the
/// norm after clipping show the threshold itself).
const AT_THRESHOLD: f64 = 0.01;

pub(crate) fn detect(cx: &Context, out: &mut Vec<Finding>) {
    let Some(g) = cx.grad else { return };
    let mut parts: Vec<String> = Vec::new();
    let mut start = f64::INFINITY;
    let nonfinite: Vec<f64> = g
        .points
        .iter()
        .filter(|p| !p.1.is_finite())
        .map(|p| p.0)
        .collect();
    if let Some(&s) = nonfinite.first() {
        parts.push(format!(
            "non-finite at {} logged steps from step {}",
            nonfinite.len(),
            num(s)
        ));
        start = start.min(s);
    }
    let trend = Trend::of(&g.points, MIN_POINTS);
    let mut jumps: Vec<(f64, f64)> = Vec::new();
    let mut followed = 0;
    let mut growth = f64::NAN;
    if let Some(t) = &trend {
        jumps = find_jumps(t);
        let trouble = loss_trouble_steps(cx, out);
        let lead = cx
            .train
            .as_ref()
            .map(|(s, _)| logging_interval(&s.points))
            .filter(|x| x.is_finite())
            .unwrap_or(0.0)
            * LEAD_INTERVALS;
        followed = jumps
            .iter()
            .filter(|(s, _)| trouble.iter().any(|x| *x >= *s && *x <= *s + lead))
            .count();
        if let Some(&(s, r)) = jumps.first() {
            let largest = jumps.iter().map(|j| j.1).fold(r, f64::max);
            parts.push(format!(
                "{} jump{} above {}× its trend (largest {}×){}",
                jumps.len(),
                if jumps.len() == 1 { "" } else { "s" },
                num(JUMP_RATIO),
                num(largest),
                if followed > 0 {
                    format!(", {followed} followed by a loss spike or blow-up")
                } else {
                    String::new()
                }
            ));
            start = start.min(s);
        }
        let m = t.argmin();
        let end = t.tail(0.1, 3);
        if m + 1 < t.len() && t.level[m] > 0.0 && end >= GROWTH_RATIO * t.level[m] {
            growth = end / t.level[m];
            let onset = (m..t.len())
                .find(|&i| t.level[i] >= 2.0 * t.level[m])
                .unwrap_or(m);
            parts.push(format!(
                "grows {}× from {} at step {} and stays up",
                num(growth),
                num(t.level[m]),
                num(t.steps[m])
            ));
            start = start.min(t.steps[onset]);
        }
    }
    let clipped = clipped_share(cx, &g.points);
    if let Some((share, c, first)) = clipped {
        parts.push(format!(
            "clipping at {} saturated: {}% of logged steps at or above it",
            num(c),
            num((100.0 * share).round())
        ));
        start = start.min(first);
    }
    if parts.is_empty() {
        return;
    }
    // One jump alone, with no growth, nothing non-finite, no saturated clipping and no loss
    // spike or blow-up after it, is information: one large batch gradient the run absorbed.
    let isolated = jumps.len() == 1
        && followed == 0
        && growth.is_nan()
        && nonfinite.is_empty()
        && clipped.is_none();
    let severity = if isolated {
        parts.push("isolated: no loss spike or blow-up followed it".to_string());
        Severity::Info
    } else {
        Severity::Warn
    };
    let text = format!("{}: {}", g.name, parts.join("; "));
    out.push(
        Finding::new(Symptom::GradNormExplosion, severity, &g.name, start)
            .summary(text)
            .number("jumps", jumps.len() as f64)
            .number(
                "largest_jump_ratio",
                jumps.iter().map(|j| j.1).fold(f64::NAN, f64::max),
            )
            .number("jumps_followed_by_loss_trouble", followed as f64)
            .number("growth_ratio", growth)
            .number("nonfinite", nonfinite.len() as f64)
            .number("clipped_share", clipped.map_or(f64::NAN, |c| c.0))
            .marks(jumps.iter().map(|j| j.0)),
    );
}

/// (step, ratio to trend) of each jump; points within two logged points merge. A jump must
/// also rise above [`ABOVE_HIGHEST`] times the highest level the trend has had so far: a norm
/// that collapsed with a converged loss (from 2.8 at the first step to 1e-3) and comes back to
/// 0.17 is many times its trend, yet smaller than the gradients of the run's first steps.
fn find_jumps(t: &Trend) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut last = usize::MAX;
    // The highest level of the trend up to each bin.
    let mut top = f64::NEG_INFINITY;
    let highest: Vec<f64> = t
        .level
        .iter()
        .map(|l| {
            top = top.max(*l);
            top
        })
        .collect();
    for (i, p) in t.points.iter().enumerate() {
        let level = t.level_at_point(i);
        if level <= 0.0 {
            continue;
        }
        let ratio = p.1 / level;
        let z = (p.1 - level) / t.noise_at_point(i);
        if ratio >= JUMP_RATIO && z >= JUMP_Z && p.1 > ABOVE_HIGHEST * highest[t.bin_of[i]] {
            if last != usize::MAX && i - last <= 2 {
                let j = out.last_mut().expect("open");
                j.1 = j.1.max(ratio);
            } else {
                out.push((p.0, ratio));
            }
            last = i;
        }
    }
    out
}

/// Steps where the training loss spiked, started to diverge or turned non-finite, from the
/// findings of the loss detectors (which run before this one).
fn loss_trouble_steps(cx: &Context, found: &[Finding]) -> Vec<f64> {
    let train = cx.train.as_ref().map(|(s, _)| s.name.as_str());
    found
        .iter()
        .filter(|f| Some(f.metric.as_str()) == train)
        .filter(|f| {
            matches!(
                f.symptom,
                Symptom::LossSpikes | Symptom::LossDiverging | Symptom::LossNonfinite
            )
        })
        .flat_map(|f| std::iter::once(f.step).chain(f.marks.iter().copied()))
        .collect()
}

/// (share clipped, threshold, first clipped step) when clipping is saturated.
fn clipped_share(cx: &Context, points: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    let c = cx.run.config_number(&MAX_GRAD_NORM_KEYS)?;
    if c <= 0.0 {
        return None;
    }
    let finite: Vec<&(f64, f64)> = points.iter().filter(|p| p.1.is_finite()).collect();
    if finite.len() < MIN_POINTS {
        return None;
    }
    let clipped: Vec<&&(f64, f64)> = finite
        .iter()
        .filter(|p| p.1 >= c * (1.0 - AT_THRESHOLD))
        .collect();
    let share = clipped.len() as f64 / finite.len() as f64;
    let typical = median(finite.iter().map(|p| p.1));
    (share >= CLIPPED_SHARE && typical.is_finite()).then(|| (share, c, clipped[0].0))
}
