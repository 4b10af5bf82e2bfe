//! `memory-growth`: logged memory climbs step after step instead of levelling off after the
//! first steps: a leak (a loss kept with its graph, tensors appended to a list) rather than the
//! allocator settling. A one-time jump (an evaluation, the optimizer state allocated at the first
//! step) is not growth: the rise must be spread over the run.

use super::{Context, MIN_POINTS};
use crate::finding::{Finding, Severity, Symptom};
use crate::names::Role;
use crate::robust::Trend;
use mldebug_text::number::{human_bytes, num};

/// Memory settles during the first steps (caches, optimizer state, allocator pools): growth is
/// measured from this share of the run on.
const WARMUP_SHARE: f64 = 0.1;

/// Growth of this share over the rest of the run is a warning…
const GROWTH_WARN: f64 = 0.1;
/// …and of this share a failure: at that rate a longer run runs out of memory.
const GROWTH_FAIL: f64 = 0.5;

/// The rise must be spread: halfway through the measured stretch, the trend has made between
/// these shares of its total rise (a single jump puts it at 0 or 1).
const SPREAD: (f64, f64) = (0.2, 0.8);

/// The growth has started once the trend is this share of the total rise above the base.
const ONSET_SHARE: f64 = 0.01;

/// At least this share of the trend's successive changes must be non-negative (step after step).
const MONOTONE_SHARE: f64 = 0.8;

pub(crate) fn detect(cx: &Context, out: &mut Vec<Finding>) {
    for s in cx.run.of_role(Role::Memory) {
        let Some(t) = Trend::of(&s.points, MIN_POINTS) else {
            continue;
        };
        let w = ((t.len() as f64 * WARMUP_SHARE) as usize).min(t.len() - 2);
        let head = (w + (t.len() / 10).max(3)).min(t.len());
        let base = crate::robust::median(t.level[w..head].iter().copied());
        let end = t.level[t.len() - 1];
        if base.is_nan() || base <= 0.0 || end <= base {
            continue;
        }
        let growth = (end - base) / base;
        if growth < GROWTH_WARN {
            continue;
        }
        // The growth starts where the trend leaves the base by more than twice its noise (or
        // than [`ONSET_SHARE`] of the whole rise, for a staircase of allocator blocks).
        let leave = base + (2.0 * t.noise[w]).max(ONSET_SHARE * (end - base));
        let Some(onset) = (w..t.len()).find(|&i| t.level[i] > leave) else {
            continue;
        };
        // From there on it must climb step after step, spread over the stretch: halfway in
        // steps, not in points (a log written every step and later every hundredth, or a run
        // measured every step and later every sixteenth, has most of its points early).
        let halfway = (t.steps[onset] + t.steps[t.len() - 1]) / 2.0;
        let mid = t.level[(onset..t.len())
            .find(|&i| t.steps[i] >= halfway)
            .unwrap_or(t.len() - 1)];
        let progress = (mid - base) / (end - base);
        let stretch = &t.level[onset..];
        let rising = stretch.windows(2).filter(|p| p[1] >= p[0]).count();
        if stretch.len() < 3
            || !(SPREAD.0..=SPREAD.1).contains(&progress)
            || (rising as f64) < MONOTONE_SHARE * (stretch.len() - 1) as f64
        {
            continue;
        }
        let steps = t.steps[t.len() - 1] - t.steps[onset];
        let per_1k = if steps > 0.0 {
            (end - base) / steps * 1000.0
        } else {
            f64::NAN
        };
        let severity = if growth >= GROWTH_FAIL {
            Severity::Fail
        } else {
            Severity::Warn
        };
        // A series in bytes reads as bytes (`946.1 MB`); one in the log's own unit as it came.
        let amount = if crate::names::in_bytes(&s.name) {
            human_bytes
        } else {
            num
        };
        let text = format!(
            "{} grows from {} at step {} to {} at step {} (+{}%, {} per 1,000 steps) and does \
             not level off",
            s.name,
            amount(base),
            num(t.steps[onset]),
            amount(end),
            num(t.steps[t.len() - 1]),
            num((100.0 * growth).round()),
            amount(per_1k),
        );
        out.push(
            Finding::new(Symptom::MemoryGrowth, severity, &s.name, t.steps[onset])
                .summary(text)
                .number("base", base)
                .number("end", end)
                .number("growth_share", growth)
                .number("per_1000_steps", per_1k),
        );
    }
}
