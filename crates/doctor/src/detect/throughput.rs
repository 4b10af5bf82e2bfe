//! `throughput-drop`: samples (or tokens, or iterations) per second fall and stay down, or steps
//! take much longer: the device is waiting, most often for data. Step times are read as their
//! inverse, a rate, so one rule serves both. Isolated stalls (one slow step among fast ones) are
//! counted too; when they recur at a steady interval they are evaluation or checkpointing.

use super::{Context, MIN_POINTS};
use crate::finding::{Finding, Severity, Symptom};
use crate::names::Role;
use crate::robust::{median, Trend};
use mldebug_text::number::num;

/// A fall of the rate by this share, from the stretch before to the stretch after, is a drop:
/// half the device's time lost. Other jobs on a shared machine cost the healthy runs of the test
/// corpus up to 36% of their wall-clock rate (tqdm's it/s), which must not be a finding.
const DROP_SHARE: f64 = 0.5;

/// After the drop, this share of the trend must stay at least half as far down: a drop that
/// recovers was a stall or a busy spell.
const SUSTAINED_SHARE: f64 = 0.8;

/// …over at least this many logged points.
const MIN_SUSTAIN: usize = 3;

/// The first points are often slow (compilation, caches, allocator warm-up): they are left out
/// of the comparison.
const SKIP_SHARE: f64 = 0.05;

/// A step at under this share of the rate around it is a stall (the step took ten times as long).
const STALL_SHARE: f64 = 0.1;

/// Stalls on more than this share of steps are a warning: the device waits often.
const STALL_WARN_SHARE: f64 = 0.05;

pub(crate) fn detect(cx: &Context, out: &mut Vec<Finding>) {
    for role in [Role::Throughput, Role::StepTime] {
        for s in cx.run.of_role(role) {
            let rate: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter(|p| p.1.is_finite() && p.1 > 0.0)
                .map(|p| {
                    (
                        p.0,
                        if role == Role::StepTime {
                            1.0 / p.1
                        } else {
                            p.1
                        },
                    )
                })
                .collect();
            let Some(t) = Trend::of(&rate, MIN_POINTS) else {
                continue;
            };
            if let Some(f) = drop(&s.name, role, &t) {
                out.push(f);
            } else if let Some(f) = stalls(&s.name, &t) {
                out.push(f);
            }
        }
    }
}

/// The value as logged (a rate, or a time for step-time series).
fn shown(role: Role, rate: f64) -> f64 {
    if role == Role::StepTime {
        1.0 / rate
    } else {
        rate
    }
}

fn drop(name: &str, role: Role, t: &Trend) -> Option<Finding> {
    let skip = ((t.len() as f64 * SKIP_SHARE) as usize).min(t.len() - 1);
    let lv = &t.level[skip..];
    let k = change_point(lv)?;
    let before = median(lv[..k].iter().copied());
    let after = median(lv[k..].iter().copied());
    if after.is_nan() || after >= (1.0 - DROP_SHARE) * before {
        return None;
    }
    let held = lv[k..]
        .iter()
        .filter(|v| **v < (1.0 - DROP_SHARE / 2.0) * before)
        .count();
    if (held as f64) < SUSTAINED_SHARE * (lv.len() - k) as f64 {
        return None;
    }
    let lost = 1.0 - after / before;
    let step = t.steps[skip + k];
    let text = format!(
        "{name} falls from {} to {} at step {} and stays down: {}% of the rate lost",
        num(shown(role, before)),
        num(shown(role, after)),
        num(step),
        num((100.0 * lost).round()),
    );
    Some(
        Finding::new(Symptom::ThroughputDrop, Severity::Warn, name, step)
            .summary(text)
            .number("before", shown(role, before))
            .number("after", shown(role, after))
            .number("lost_share", lost),
    )
}

/// The split of a curve into a higher stretch and a lower one that separates them best: the
/// largest fall of the mean, weighted by √(k·(n−k)) so that a split near either end needs a
/// larger fall (the usual statistic for one change in mean). Each side keeps
/// [`MIN_SUSTAIN`] points.
fn change_point(v: &[f64]) -> Option<usize> {
    let n = v.len();
    if n < 2 * MIN_SUSTAIN {
        return None;
    }
    let total: f64 = v.iter().sum();
    let mut prefix = 0.0;
    let mut best: Option<(usize, f64)> = None;
    for k in 1..n {
        prefix += v[k - 1];
        if k < MIN_SUSTAIN || n - k < MIN_SUSTAIN {
            continue;
        }
        let (a, b) = (prefix / k as f64, (total - prefix) / (n - k) as f64);
        let score = (a - b) * ((k * (n - k)) as f64).sqrt();
        if best.is_none_or(|(_, s)| score > s) {
            best = Some((k, score));
        }
    }
    best.filter(|(_, s)| *s > 0.0).map(|(k, _)| k)
}

fn stalls(name: &str, t: &Trend) -> Option<Finding> {
    let at: Vec<f64> = t
        .points
        .iter()
        .enumerate()
        .filter(|(i, p)| p.1 < STALL_SHARE * t.level_at_point(*i))
        .map(|(_, p)| p.0)
        .collect();
    let first = *at.first()?;
    let share = at.len() as f64 / t.points.len() as f64;
    let gaps: Vec<f64> = at.windows(2).map(|w| w[1] - w[0]).collect();
    let period = median(gaps.iter().copied());
    let steady = at.len() >= 3 && gaps.iter().all(|g| (g - period).abs() <= 0.1 * period);
    let severity = if share > STALL_WARN_SHARE && !steady {
        Severity::Warn
    } else {
        Severity::Info
    };
    let text = format!(
        "{name} stalls at {} logged step{} (under {}% of the usual rate){}",
        at.len(),
        if at.len() == 1 { "" } else { "s" },
        num(100.0 * STALL_SHARE),
        if steady {
            format!(
                ", every {} steps: evaluation or checkpointing?",
                num(period)
            )
        } else {
            String::new()
        }
    );
    Some(
        Finding::new(Symptom::ThroughputDrop, severity, name, first)
            .summary(text)
            .number("stalls", at.len() as f64)
            .number("stall_share", share)
            .number("period_steps", if steady { period } else { f64::NAN })
            .marks(at),
    )
}
