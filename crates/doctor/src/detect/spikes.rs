//! `loss-spikes`: the training loss jumps far above its trend and comes back. A spike is judged
//! against the noise where it happens (a robust z-score from the MAD of nearby points) and must
//! also be large in the loss's own terms, so the ordinary tail of per-batch losses is not one.
//! Spikes at a steady interval are named periodic, and tied to epoch boundaries when the run
//! logs its epoch.

use super::Context;
use crate::finding::{Finding, Severity, Symptom};
use crate::robust::median;
use mldebug_text::number::num;

/// Spike statistics need this many points: fewer give no noise scale to judge against.
const SPIKE_MIN_POINTS: usize = 20;

/// A spike is at least this many noise scales above the trend. Gaussian noise passes 6 robust
/// standard deviations about once in a billion points, but per-batch losses are skewed to the
/// right, and their MAD understates the upper tail: the healthy runs of the test corpus reach
/// 6.3, the planted bad batches 20 and more.
const SPIKE_Z: f64 = 8.0;

/// …and at least this share above the trend in the loss's own terms: smaller bumps do not
/// change what the run learns.
const SPIKE_MIN_REL: f64 = 0.25;

/// Points this close (in logged points) belong to one spike.
const MERGE_GAP: usize = 2;

/// A spike to this multiple of the trend is worth a warning (the loss doubled for a moment);
/// smaller ones are reported as information.
const SPIKE_WARN_RATIO: f64 = 2.0;

/// Spikes are periodic with at least this many of them…
const PERIODIC_MIN: usize = 3;
/// …when this share of the gaps between them are within [`PERIOD_TOLERANCE`] of their median.
const PERIODIC_SHARE: f64 = 0.8;
const PERIOD_TOLERANCE: f64 = 0.1;

/// One spike: its first step, its peak step and how far above the trend it went.
struct Spike {
    step: f64,
    peak_ratio: f64,
    peak_z: f64,
}

pub(crate) fn detect(cx: &Context, out: &mut Vec<Finding>) {
    let Some((s, t)) = cx.train_trend() else {
        return;
    };
    if t.points.len() < SPIKE_MIN_POINTS {
        return;
    }
    let scored: Vec<(usize, f64, f64)> = t
        .points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let level = t.level_at_point(i);
            let z = (p.1 - level) / t.noise_at_point(i);
            let big = level <= 0.0 || p.1 >= (1.0 + SPIKE_MIN_REL) * level;
            (z >= SPIKE_Z && big).then_some((i, z, p.1 / level))
        })
        .collect();
    let spikes = merge(&scored, t);
    let Some(first) = spikes.first() else { return };
    let worst = spikes
        .iter()
        .max_by(|a, b| a.peak_ratio.total_cmp(&b.peak_ratio))
        .expect("non-empty");
    let period = period(&spikes);
    let spe = cx.steps_per_epoch();
    let at_epochs = match (period, spe) {
        (Some(p), Some(e)) => {
            (p / e).round() >= 1.0 && (p / e - (p / e).round()).abs() <= PERIOD_TOLERANCE
        }
        _ => false,
    };
    let pattern = match period {
        Some(p) if at_epochs => format!("; periodic every {} steps, at epoch boundaries", num(p)),
        Some(p) => format!("; periodic every {} steps", num(p)),
        None => String::new(),
    };
    let severity = if worst.peak_ratio >= SPIKE_WARN_RATIO {
        Severity::Warn
    } else {
        Severity::Info
    };
    let text = format!(
        "{} spikes {} time{} and recovers; the largest to {}× its trend at step {} \
         ({} noise scales){pattern}",
        s.name,
        spikes.len(),
        if spikes.len() == 1 { "" } else { "s" },
        num(worst.peak_ratio),
        num(worst.step),
        num(worst.peak_z),
    );
    out.push(
        Finding::new(Symptom::LossSpikes, severity, &s.name, first.step)
            .summary(text)
            .number("spikes", spikes.len() as f64)
            .number("largest_ratio", worst.peak_ratio)
            .number("largest_step", worst.step)
            .number("largest_z", worst.peak_z)
            .number("period_steps", period.unwrap_or(f64::NAN))
            .number("steps_per_epoch", spe.unwrap_or(f64::NAN))
            .marks(spikes.iter().map(|s| s.step)),
    );
}

fn merge(scored: &[(usize, f64, f64)], t: &crate::robust::Trend) -> Vec<Spike> {
    let mut out: Vec<Spike> = Vec::new();
    let mut last_i = usize::MAX;
    for &(i, z, ratio) in scored {
        if last_i != usize::MAX && i - last_i <= MERGE_GAP {
            let s = out.last_mut().expect("a spike is open");
            s.peak_ratio = s.peak_ratio.max(ratio);
            s.peak_z = s.peak_z.max(z);
        } else {
            out.push(Spike {
                step: t.points[i].0,
                peak_ratio: ratio,
                peak_z: z,
            });
        }
        last_i = i;
    }
    out
}

/// The median gap between spikes when they come at a steady interval.
fn period(spikes: &[Spike]) -> Option<f64> {
    if spikes.len() < PERIODIC_MIN {
        return None;
    }
    let gaps: Vec<f64> = spikes.windows(2).map(|w| w[1].step - w[0].step).collect();
    let g = median(gaps.iter().copied());
    let close = gaps
        .iter()
        .filter(|x| (*x - g).abs() <= PERIOD_TOLERANCE * g)
        .count();
    (g > 0.0 && close as f64 >= PERIODIC_SHARE * gaps.len() as f64).then_some(g)
}
