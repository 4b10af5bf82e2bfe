//! `memory-stages`: the memory of the first two steps, stage by stage, from the `memory_stages`
//! points of optimizer 0's heavy `step` records (TRACE.md). A measurement, reported as `info`;
//! a second step whose peak rises far above the first's is a `warn`. Growth over many steps is
//! `memory-growth` (detect/memory.rs), not this.
//!
//! A stage's figure is the rise of the peak between its two ends: on CUDA of
//! `max_memory_allocated` (the peak so far: the program's own reading of it is never reset), on
//! CPU of the process's peak resident set; beside it the change of what is held at its end
//! (`memory_allocated`, or the resident set). For a transformers model whose config
//! `mldebug memory` reads, its estimate of each stage stands beside them ([`memory_estimate`]).

use super::memory_estimate::{self, Figure, Measured, MIB};
use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;
use crate::trace::records::{Memory, Step};
use std::collections::BTreeMap;

/// The stages: name, the point that opens it, the point that closes it.
const STAGES: [(&str, &str, &str); 3] = [
    ("forward", "forward", "backward"),
    ("backward", "backward", "backward_end"),
    ("optimizer step", "step", "step_end"),
];

/// The steps reported: the first (which allocates the optimizer's state) and the second.
const STEPS: [u64; 2] = [1, 2];

/// The second step's peak rising above the first's by more than this many times the first
/// step's whole rise is a spike: once the optimizer's state exists, a step repeats the previous
/// one, so its peak should stay near the first step's.
const SPIKE_FACTOR: f64 = 1.0;

/// … and by at least this many bytes: below it, allocator rounding and lazily created buffers
/// (thread pools, workspaces) move a small model's figures by that much at no cost.
const SPIKE_FLOOR: f64 = 256.0 * 1024.0 * 1024.0;

/// The two readings of a point: the peak so far and what is held.
fn readings(m: &Memory, cuda: bool) -> (Option<f64>, Option<f64>) {
    if cuda {
        (m.max_allocated, m.allocated)
    } else {
        (m.rss_peak, m.rss)
    }
}

/// One stage of one step: the rise of the peak and the change of what is held.
struct Stage {
    name: &'static str,
    peak_rise: Option<f64>,
    held: Option<f64>,
}

fn stages(points: &BTreeMap<String, Memory>, cuda: bool) -> Vec<Stage> {
    STAGES
        .iter()
        .map(|(name, a, b)| {
            // A point not reached (no backward) leaves its stages unknown.
            let read = |p: &str| points.get(p).map_or((None, None), |m| readings(m, cuda));
            let ((pa, ha), (pb, hb)) = (read(a), read(b));
            Stage {
                name,
                peak_rise: pa.zip(pb).map(|(a, b)| b - a),
                held: ha.zip(hb).map(|(a, b)| b - a),
            }
        })
        .collect()
}

/// The peak at a point.
fn peak(points: &BTreeMap<String, Memory>, point: &str, cuda: bool) -> Option<f64> {
    points.get(point).and_then(|m| readings(m, cuda).0)
}

fn mib(x: f64) -> String {
    format!("{:+.1} MiB", x / MIB)
}

pub(super) fn judge(p: &Process, out: &mut Vec<Finding>) {
    let steps: Vec<(&Step, &BTreeMap<String, Memory>)> = STEPS
        .iter()
        .filter_map(|n| {
            let s = p.steps.iter().find(|s| s.optimizer == 0 && s.step == *n)?;
            Some((s, s.memory_stages.as_ref()?))
        })
        .collect();
    let Some((first, first_points)) = steps.first().copied() else {
        return;
    };
    let cuda = first_points.values().any(|m| m.allocated.is_some());
    let what = if cuda {
        "allocated memory (max_memory_allocated)"
    } else {
        "the resident set"
    };
    let mut details = Vec::new();
    let mut f = Finding::new(
        Symptom::MemoryStages,
        Severity::Info,
        "memory_bytes",
        first.step as f64,
    );
    let mut parts = Vec::new();
    for (s, points) in &steps {
        let mut line = Vec::new();
        for st in stages(points, cuda) {
            line.push(
                st.peak_rise
                    .map_or("?".into(), |r| format!("{:+.1}", r / MIB)),
            );
            details.push(format!(
                "step {} {}: peak {}, held {}",
                s.step,
                st.name,
                st.peak_rise.map_or("unknown".into(), mib),
                st.held.map_or("unknown".into(), mib)
            ));
            f = f.number(
                number_name(s.step, st.name),
                st.peak_rise.unwrap_or(f64::NAN),
            );
        }
        parts.push(format!("step {} {} MiB", s.step, line.join(" / ")));
    }
    let end1 = peak(first_points, "step_end", cuda);
    let start1 = peak(first_points, "forward", cuda);
    let end2 = steps
        .get(1)
        .and_then(|(_, pts)| peak(pts, "step_end", cuda));
    let rise1 = end1.zip(start1).map(|(e, s)| e - s);
    let rise2 = end2.zip(end1).map(|(b, a)| b - a);
    let mut summary = format!(
        "rise of the peak of {what} per stage, forward / backward / optimizer step: {}",
        parts.join(", ")
    );
    if let Some(r2) = rise2 {
        summary.push_str(&format!("; step 2's peak over step 1's {}", mib(r2)));
    }
    let spike = rise1
        .zip(rise2)
        .is_some_and(|(r1, r2)| r2 > SPIKE_FLOOR && r2 > SPIKE_FACTOR * r1.max(0.0));
    if spike {
        f.severity = Severity::Warn;
        summary.push_str(
            ": a spike, more than the whole first step added (a longer batch, an evaluation \
             pass, outputs kept across steps)",
        );
    }
    if let Some(m) = first_points.get("forward") {
        if let Some(base) = readings(m, cuda).1 {
            details.push(format!(
                "held before the first forward: {:.1} MiB",
                base / MIB
            ));
        }
    }
    let beside = memory_estimate::beside(p, &measured(&steps, cuda));
    if let Some(b) = beside {
        summary.push_str(b.summary.as_deref().unwrap_or(""));
        details.extend(b.details);
        for (name, value) in b.numbers {
            f = f.number(name, value);
        }
    }
    out.push(
        f.summary(summary)
            .number("first_step_peak_rise_bytes", rise1.unwrap_or(f64::NAN))
            .number("second_over_first_bytes", rise2.unwrap_or(f64::NAN))
            .details(details),
    );
}

/// The figures the estimate is compared with: the stages of the last step reported (the
/// steady state the estimate describes), what was held before the first forward, the peak.
fn measured(steps: &[(&Step, &BTreeMap<String, Memory>)], cuda: bool) -> Measured {
    let (first, last) = (steps[0].1, steps[steps.len() - 1]);
    let figures = stages(last.1, cuda);
    let mut out = [None; 3];
    for ((slot, (_, _, end)), st) in out.iter_mut().zip(STAGES).zip(figures) {
        *slot = peak(last.1, end, cuda).map(|bytes| Figure {
            bytes,
            own: st.peak_rise.is_some_and(|r| r > 0.0),
        });
    }
    Measured {
        cuda,
        step: last.0.step,
        load: first.get("forward").and_then(|m| readings(m, cuda).1),
        stages: out,
        peak: peak(last.1, "step_end", cuda),
    }
}

/// The finding's number for one stage of one step.
fn number_name(step: u64, stage: &str) -> &'static str {
    match (step, stage) {
        (1, "forward") => "step1_forward_bytes",
        (1, "backward") => "step1_backward_bytes",
        (1, _) => "step1_optimizer_step_bytes",
        (_, "forward") => "step2_forward_bytes",
        (_, "backward") => "step2_backward_bytes",
        _ => "step2_optimizer_step_bytes",
    }
}
