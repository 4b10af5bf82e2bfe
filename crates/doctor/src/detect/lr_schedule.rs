//! `lr-schedule`: the learning rate actually applied, read from the log: at 0 while training
//! goes on, no warmup for an Adam-family optimizer at a high rate (a warning when the loss
//! misbehaved early, information otherwise), restarts, and a schedule that does not match the
//! run's configuration (a rate above the configured one, a decaying schedule that never moves,
//! a constant one that does).

use super::Context;
use crate::finding::{Finding, Severity, Symptom};
use crate::names::{self, LR_KEYS, OPTIMIZER_KEYS, SCHEDULER_KEYS, WARMUP_KEYS};
use mldebug_text::number::num;

/// A rate at or below this share of the peak is 0 in effect (updates a thousand times smaller
/// than the run's own do not move the weights within the run).
const ZERO_SHARE: f64 = 1e-3;

/// A zero stretch matters when it lasts this share of the run (and at least two logged points):
/// a single point at the start of a warmup or the end of a decay is the schedule working.
const ZERO_MIN_SHARE: f64 = 0.05;

/// A first logged rate this close to the peak means the run started at full rate (no warmup).
const WARM_SHARE: f64 = 0.9;

/// Without warmup, Adam-family optimizers are at risk from this rate up: their first steps have
/// a poorly estimated second moment and move each weight by about the full rate. 1e-3 is the
/// Adam default for small networks; transformer recipes warm up to rates at or below it.
const HIGH_ADAM_LR: f64 = 1e-3;

/// Loss trouble within this share of the run counts as "early" (where warmup would have helped).
const EARLY_SHARE: f64 = 0.25;

/// A rise by this factor between two logged points, after the rate has come down from its
/// peak, is a restart.
const RESTART_RATIO: f64 = 2.0;

/// The logged peak may exceed the configured rate by rounding only.
const CONFIG_TOLERANCE: f64 = 0.01;

/// A decaying schedule whose logged rate varies less than this share never moved.
const CONSTANT_SHARE: f64 = 0.01;

/// Fewer logged rates than this cannot show a schedule's shape.
const MIN_LR_POINTS: usize = 5;

pub(crate) fn detect(cx: &Context, out: &mut Vec<Finding>) {
    let Some(l) = cx.lr else { return };
    let pts: Vec<(f64, f64)> = l
        .points
        .iter()
        .copied()
        .filter(|p| p.1.is_finite())
        .collect();
    if pts.len() < MIN_LR_POINTS {
        return;
    }
    let peak = pts.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let mut parts: Vec<(Severity, f64, String)> = Vec::new();
    if peak <= 0.0 {
        parts.push((
            Severity::Fail,
            pts[0].0,
            "the learning rate is 0 for the whole run".into(),
        ));
    } else {
        zero_stretch(&pts, peak, &mut parts);
        no_warmup(cx, &pts, peak, out, &mut parts);
        restarts(cx, &pts, peak, &mut parts);
        against_config(cx, &pts, peak, &mut parts);
    }
    let Some(severity) = parts.iter().map(|p| p.0).max() else {
        return;
    };
    let step = parts.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let text = format!(
        "{}: {}",
        l.name,
        parts
            .iter()
            .map(|p| p.2.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    );
    out.push(
        Finding::new(Symptom::LrSchedule, severity, &l.name, step)
            .summary(text)
            .number("peak", peak)
            .number("first", pts[0].1)
            .number(
                "configured",
                cx.run.config_number(&LR_KEYS).unwrap_or(f64::NAN),
            ),
    );
}

fn zero_stretch(pts: &[(f64, f64)], peak: f64, parts: &mut Vec<(Severity, f64, String)>) {
    let zero = |p: &(f64, f64)| p.1 <= ZERO_SHARE * peak;
    let mut i = 0;
    while i < pts.len() {
        if !zero(&pts[i]) {
            i += 1;
            continue;
        }
        let j = (i..pts.len())
            .find(|&j| !zero(&pts[j]))
            .unwrap_or(pts.len());
        let len = j - i;
        if len >= 2 && len as f64 >= ZERO_MIN_SHARE * pts.len() as f64 {
            let to = if j == pts.len() {
                "the end".to_string()
            } else {
                format!("step {}", num(pts[j].0))
            };
            parts.push((
                Severity::Fail,
                pts[i].0,
                format!(
                    "at 0 from step {} to {to} ({len} logged points, {}% of the run): nothing is learned there",
                    num(pts[i].0),
                    num((100.0 * len as f64 / pts.len() as f64).round())
                ),
            ));
            return;
        }
        i = j;
    }
}

fn no_warmup(
    cx: &Context,
    pts: &[(f64, f64)],
    peak: f64,
    found: &[Finding],
    parts: &mut Vec<(Severity, f64, String)>,
) {
    let optimizer = cx.run.config_text(&OPTIMIZER_KEYS);
    if optimizer.is_some_and(|o| !names::is_adam_family(o)) {
        return;
    }
    let warmup = cx.run.config_number(&WARMUP_KEYS).unwrap_or(0.0);
    if pts[0].1 < WARM_SHARE * peak || peak < HIGH_ADAM_LR || warmup > 0.0 {
        return;
    }
    let (first, last) = (pts[0].0, pts[pts.len() - 1].0);
    let early_end = first + EARLY_SHARE * (last - first);
    let train = cx.train.as_ref().map(|(s, _)| s.name.as_str());
    let trouble = found
        .iter()
        .filter(|f| Some(f.metric.as_str()) == train && f.severity >= Severity::Warn)
        .filter(|f| {
            matches!(
                f.symptom,
                Symptom::LossSpikes | Symptom::LossDiverging | Symptom::LossNonfinite
            )
        })
        .find(|f| f.step <= early_end);
    let who = optimizer.map_or(
        "the optimizer (not in the config)".to_string(),
        str::to_string,
    );
    let (severity, tail) = match trouble {
        Some(f) => (
            Severity::Warn,
            format!(", and the loss shows {} at step {}", f.symptom, num(f.step)),
        ),
        None => (
            Severity::Info,
            "; the loss did not suffer early".to_string(),
        ),
    };
    parts.push((
        severity,
        first,
        format!(
            "no warmup: starts at {} (peak {}) with {who}{tail}",
            num(pts[0].1),
            num(peak)
        ),
    ));
}

fn restarts(cx: &Context, pts: &[(f64, f64)], peak: f64, parts: &mut Vec<(Severity, f64, String)>) {
    let mut seen_peak = 0.0f64;
    let mut at: Vec<f64> = Vec::new();
    let mut above: Option<(f64, f64, f64)> = None;
    for w in pts.windows(2) {
        seen_peak = seen_peak.max(w[0].1);
        let came_down = w[0].1 < WARM_SHARE * seen_peak;
        if came_down && w[1].1 >= RESTART_RATIO * w[0].1 && w[1].1 > ZERO_SHARE * peak {
            if w[1].1 >= RESTART_RATIO * seen_peak && above.is_none() {
                above = Some((w[1].0, w[1].1, seen_peak));
            } else {
                at.push(w[1].0);
            }
        }
    }
    if let Some((step, value, before)) = above {
        parts.push((
            Severity::Warn,
            step,
            format!(
                "jumps to {} at step {}, {}× its earlier peak {} (a resumed run or a unit mix-up?)",
                num(value),
                num(step),
                num(value / before),
                num(before)
            ),
        ));
    }
    let Some(&first) = at.first() else { return };
    let schedule = cx.run.config_text(&SCHEDULER_KEYS);
    let unplanned = schedule.is_some_and(|s| !names::schedule_restarts(s));
    let list: Vec<String> = at.iter().take(5).map(|s| num(*s)).collect();
    parts.push((
        if unplanned {
            Severity::Warn
        } else {
            Severity::Info
        },
        first,
        format!(
            "restarts at step{} {}{}{}",
            if at.len() == 1 { "" } else { "s" },
            list.join(", "),
            if at.len() > 5 { ", …" } else { "" },
            match schedule {
                Some(s) if unplanned =>
                    format!(", which the configured schedule `{s}` does not do"),
                _ => String::new(),
            }
        ),
    ));
}

fn against_config(
    cx: &Context,
    pts: &[(f64, f64)],
    peak: f64,
    parts: &mut Vec<(Severity, f64, String)>,
) {
    if let Some(c) = cx.run.config_number(&LR_KEYS).filter(|c| *c > 0.0) {
        if peak > c * (1.0 + CONFIG_TOLERANCE) {
            let at = pts
                .iter()
                .find(|p| p.1 > c * (1.0 + CONFIG_TOLERANCE))
                .map_or(pts[0].0, |p| p.0);
            parts.push((
                Severity::Warn,
                at,
                format!("peaks at {}, above the configured {}", num(peak), num(c)),
            ));
        }
    }
    let Some(schedule) = cx.run.config_text(&SCHEDULER_KEYS) else {
        return;
    };
    let low = pts.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let after_peak = pts.iter().position(|p| p.1 >= peak).unwrap_or(0);
    let low_after = pts[after_peak..]
        .iter()
        .map(|p| p.1)
        .fold(f64::INFINITY, f64::min);
    if names::schedule_decays(schedule) && peak - low <= CONSTANT_SHARE * peak {
        parts.push((
            Severity::Warn,
            pts[0].0,
            format!(
                "constant at {} although the configured schedule is `{schedule}`: is the scheduler stepped?",
                num(peak)
            ),
        ));
    } else if names::schedule_constant(schedule) && low_after < WARM_SHARE * peak {
        let at = pts[after_peak..]
            .iter()
            .find(|p| p.1 < WARM_SHARE * peak)
            .map_or(pts[0].0, |p| p.0);
        parts.push((
            Severity::Warn,
            at,
            format!(
                "falls to {} after its peak {} although the configured schedule is `{schedule}`",
                num(low_after),
                num(peak)
            ),
        ));
    }
}
