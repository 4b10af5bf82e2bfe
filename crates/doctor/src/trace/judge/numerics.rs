//! Non-finite values: the first loss that is not finite, the first module whose output is not,
//! the first gradient; and the batch behind each loss spike the log detector finds.

use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;

/// A trace's loss is each batch's own, noisier than the averaged loss a log usually holds: a
/// spike is worth a warning only at this multiple of the trend (a corrupt record gives
/// thousands; a hard batch near the end of a short run gives two or three).
const TRACE_SPIKE_WARN_RATIO: f64 = 4.0;

pub(super) fn judge(p: &Process, out: &mut Vec<Finding>) {
    let first = |phase: &str| p.nonfinite.iter().find(|n| n.phase == phase);
    let loss = first("loss");
    let forward = first("forward");
    let gradient = first("gradient");
    let Some(any) = loss.or(forward).or(gradient) else {
        return;
    };
    let mut parts = Vec::new();
    if let Some(l) = loss {
        parts.push(format!("the loss is not finite from step {}", l.step));
    }
    if let Some(f) = forward {
        parts.push(format!(
            "the first module whose output was not finite: `{}`{}",
            f.module.as_deref().unwrap_or("?"),
            f.class
                .as_ref()
                .map(|c| format!(" ({c})"))
                .unwrap_or_default()
        ));
    }
    if let Some(g) = gradient {
        parts.push(format!(
            "the first gradient that was not: `{}`",
            g.module.as_deref().unwrap_or("?")
        ));
    }
    let frames = forward
        .or(loss)
        .map(|n| n.frames.clone())
        .unwrap_or_default();
    out.push(
        Finding::new(Symptom::Nonfinite, Severity::Fail, "loss", any.step as f64)
            .summary(parts.join("; "))
            .number("step", any.step as f64)
            .details(frames.iter().map(|f| format!("at {f}")))
            .at(frames.first().cloned()),
    );
}

/// Whether a log detector's finding repeats one the trace already explains better (a NaN loss
/// is `nonfinite`, with its module).
pub(super) fn covered(p: &Process, f: &Finding) -> bool {
    f.symptom == Symptom::LossNonfinite && !p.nonfinite.is_empty()
}

/// Adds, to each loss-spike finding, the fingerprint of the batch at the spike's steps: the
/// same fingerprint again later is the same data.
pub(super) fn annotate_spikes(p: &Process, out: &mut [Finding]) {
    for f in out.iter_mut().filter(|f| f.symptom == Symptom::LossSpikes) {
        if f.severity == Severity::Warn
            && f.get("largest_ratio")
                .is_some_and(|r| r < TRACE_SPIKE_WARN_RATIO)
        {
            f.severity = Severity::Info;
        }
        let mut steps: Vec<f64> = std::iter::once(f.step)
            .chain(f.marks.iter().copied())
            .collect();
        steps.sort_by(f64::total_cmp);
        steps.dedup();
        let lines: Vec<String> = steps
            .iter()
            .filter_map(|s| {
                let step = p.steps.iter().find(|x| x.step as f64 == *s)?;
                Some(format!(
                    "step {}: batch {}",
                    step.step,
                    step.batch.as_deref()?
                ))
            })
            .collect();
        let f2 = std::mem::replace(f, Finding::new(f.symptom, f.severity, "", 0.0));
        *f = f2.details(lines);
    }
}
