//! `loss-spikes`: the training loss jumps far above its trend and comes back. A spike is judged
//! against the noise where it happens (a robust z-score from the MAD of nearby points) and must
//! also be large in the loss's own terms, so the ordinary tail of per-batch losses is not one,
//! and in the run's terms: a rise that is a small share of the loss's level earlier in the run
//! (of its starting level, for a loss that fell) is noise once the loss has converged near 0,
//! however many times the collapsed trend it is.
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

/// …and its rise above the trend is at least this share of the largest level the trend has had
/// so far (for a falling loss, its early level): on a plot of the run drawn from 0 to that
/// level, a rise under a twentieth of its height reads as the line's wobble, not a spike. A
/// loss that fell from 2.2 to 3e-5 and blips to 0.006 has given back 0.3% of what it learned,
/// however many times its collapsed trend the blip is. The rule bites only once the loss has fallen below a fifth of that level (before, the 25% above
/// the trend asked for above is the larger rise), so a spike from a loss that stayed where it
/// started is judged as before.
const SPIKE_MIN_OF_SCALE: f64 = 0.05;

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
    let scale = scale_so_far(t);
    let scored: Vec<(usize, f64, f64)> = t
        .points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            // A spike is a rise and a return: a point below the one before it is part of a fall
            // or of a spike's way down. The first point has nothing before it: it is a spike
            // when the next point is back near the trend (the first logged average held a
            // blow-up), not when the next is still far above it (the start of a fast fall sits
            // above the running median for several points).
            let rises = match i {
                0 => t.points.get(1).is_some_and(|n| {
                    n.1 < (1.0 + SPIKE_MIN_REL) * t.level_at_point(1) || t.level_at_point(1) <= 0.0
                }),
                _ => p.1 > t.points[i - 1].1,
            };
            let level = t.level_at_point(i);
            let z = (p.1 - level) / t.noise_at_point(i);
            let big = level <= 0.0 || p.1 >= (1.0 + SPIKE_MIN_REL) * level;
            let material = p.1 - level >= SPIKE_MIN_OF_SCALE * scale[t.bin_of[i]];
            (rises && z >= SPIKE_Z && big && material).then_some((i, z, p.1 / level))
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

/// Per bin of the trend, the largest magnitude it has had up to that bin: the loss's scale in
/// the run so far.
fn scale_so_far(t: &crate::robust::Trend) -> Vec<f64> {
    let mut top = 0.0_f64;
    t.level
        .iter()
        .map(|l| {
            top = top.max(l.abs());
            top
        })
        .collect()
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
