//! `throughput-drop`: samples (or tokens, or iterations) per second fall and stay down, or steps
//! take much longer: the device is waiting, most often for data. Step times are read as their
//! inverse, a rate, so one rule serves both. Isolated stalls (one slow step among fast ones) are
//! counted too; when they recur at a steady interval they are evaluation or checkpointing.

use super::{Context, MIN_POINTS};
use crate::finding::{Finding, Severity, Symptom};
use crate::names::Role;
use crate::robust::{median, Trend};
use mldebug_sweep::numbers::num;

/// A fall of the trend to this share below the best rate reached before it is a drop: a third
/// of the device's time lost, far beyond the few percent that logging or a busy machine cost.
const DROP_SHARE: f64 = 0.3;

/// After the drop, this share of the trend must stay at least half as far down: a drop that
/// recovers at once was a stall.
const SUSTAINED_SHARE: f64 = 0.8;

/// …over at least this many logged points.
const MIN_SUSTAIN: usize = 3;

/// The first points are often slow (compilation, caches, allocator warm-up); the best rate is
/// taken from this share of the run on.
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
                .map(|p| (p.0, if role == Role::StepTime { 1.0 / p.1 } else { p.1 }))
                .collect();
            let Some(t) = Trend::of(&rate, MIN_POINTS) else { continue };
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
    let mut best = t.level[skip];
    let mut best_at = skip;
    for i in skip..t.len() {
        if t.level[i] > best {
            best = t.level[i];
            best_at = i;
        }
        if t.level[i] >= (1.0 - DROP_SHARE) * best {
            continue;
        }
        let after = &t.level[i..];
        let held = after.iter().filter(|v| **v < (1.0 - DROP_SHARE / 2.0) * best).count();
        if after.len() < MIN_SUSTAIN || (held as f64) < SUSTAINED_SHARE * after.len() as f64 {
            continue;
        }
        let now = median(after.iter().copied());
        let lost = 1.0 - now / best;
        let text = format!(
            "{name} falls from {} (step {}) to {} from step {} on: {}% of the rate lost",
            num(shown(role, best)),
            num(t.steps[best_at]),
            num(shown(role, now)),
            num(t.steps[i]),
            num((100.0 * lost).round()),
        );
        return Some(
            Finding::new(Symptom::ThroughputDrop, Severity::Warn, name, t.steps[i])
                .summary(text)
                .number("before", shown(role, best))
                .number("after", shown(role, now))
                .number("lost_share", lost),
        );
    }
    None
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
    let steady = at.len() >= 3
        && gaps.iter().all(|g| (g - period).abs() <= 0.1 * period);
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
            format!(", every {} steps: evaluation or checkpointing?", num(period))
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
