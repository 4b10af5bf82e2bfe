//! How the program ended: it raised, or it never took an optimizer step (then nothing was
//! observed, which is not a pass).

use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;

/// The traceback lines a finding keeps (the end of it, where the error is).
const TRACEBACK_LINES: usize = 8;

pub(super) fn judge_process(p: &Process, out: &mut Vec<Finding>) {
    let Some(end) = &p.end else { return };
    if end.reason != "exception" {
        return;
    }
    let text = end.exception.clone().unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let last = lines
        .last()
        .copied()
        .unwrap_or("an exception")
        .trim()
        .to_string();
    let tail: Vec<String> = lines
        .iter()
        .rev()
        .take(TRACEBACK_LINES)
        .rev()
        .map(|l| l.to_string())
        .collect();
    out.push(
        Finding::new(Symptom::RunError, Severity::Fail, "run", end.steps as f64)
            .summary(format!(
                "the program raised after {} optimizer step(s): {last}",
                end.steps
            ))
            .number("steps", end.steps as f64)
            .details(tail),
    );
}

pub(super) fn judge_run(all: &[Process], trainers: &[&Process], out: &mut Vec<Finding>) {
    if trainers.iter().any(|p| !p.steps.is_empty()) {
        return;
    }
    let why = if trainers.is_empty() && all.is_empty() {
        "no process imported torch".to_string()
    } else if trainers.is_empty() {
        "torch was imported, but no model ran forward and no optimizer was made".to_string()
    } else {
        let models: usize = trainers.iter().map(|p| p.models.len()).sum();
        format!("{models} model(s) ran forward, but no optimizer stepped")
    };
    out.push(
        Finding::new(Symptom::NoOptimizerStep, Severity::Fail, "run", 0.0).summary(format!(
            "the program ended without an optimizer step ({why}): nothing of the training loop \
             was observed, so this is not a pass"
        )),
    );
}
