//! How the program ended: it raised, or it never took a step (then what was seen is said, and
//! it is a fail: nothing trained); and the probes that could not measure, once each.
//!
//! A step is an optimizer's, or, in a program that builds no optimizer, a hand-written update's
//! (a backward, then the next forward with gradients: probes/manual.py), so a program is never
//! failed for having no optimizer; one with backward passes always has steps, and whether they
//! changed the parameters is `step-changes-nothing`'s to say.

use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;

/// The traceback lines a finding keeps (the end of it, where the error is).
const TRACEBACK_LINES: usize = 8;

/// The probes whose failure leaves no step record although the program stepped.
const STEP_PROBES: [&str; 5] = ["optimizer", "steps", "manual", "backward", "forward"];

pub(super) fn judge_process(p: &Process, out: &mut Vec<Finding>) {
    probe_errors(p, out);
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

/// `probe-error`: each probe that failed, once, as information. It makes no finding of its
/// own: what it would have measured is missing from the judgement, which the line says.
fn probe_errors(p: &Process, out: &mut Vec<Finding>) {
    let Some(end) = &p.end else { return };
    for e in &end.probe_errors {
        let (name, error) = e.split_once(": ").unwrap_or(("(unnamed)", e.as_str()));
        out.push(
            // One line per probe: the same probe's error on several ranks merges into one.
            Finding::new(
                Symptom::ProbeError,
                Severity::Info,
                &format!("probe {name}"),
                0.0,
            )
            .summary(format!(
                "probe {name} could not measure: {error} (what it measures is left out of \
                     this report)"
            ))
            .details([e.clone()]),
        );
    }
}

/// Whether a probe that counts or records steps failed in this process.
fn step_probe_failed(p: &Process) -> bool {
    p.end.as_ref().is_some_and(|e| {
        e.probe_errors
            .iter()
            .any(|x| STEP_PROBES.contains(&x.split(':').next().unwrap_or("")))
    })
}

pub(super) fn judge_run(all: &[Process], trainers: &[&Process], out: &mut Vec<Finding>) {
    if trainers.iter().any(|p| !p.steps.is_empty()) {
        return;
    }
    // A probe that counts or records steps failed: its probe-error line says what is missing,
    // and the missing steps are no finding of their own.
    if trainers.iter().any(|p| step_probe_failed(p)) {
        return;
    }
    // Ended inside the first step (a closure optimizer runs many forwards and backwards in
    // one): whether anything trains is not known, so a warning, not a fail.
    if trainers
        .iter()
        .any(|p| p.end.as_ref().is_some_and(|e| e.in_step))
    {
        out.push(
            Finding::new(Symptom::NoOptimizerStep, Severity::Warn, "run", 0.0).summary(format!(
                "the program ended inside its first optimizer step ({}): the step never \
                 finished, so nothing of it was measured (a closure optimizer such as L-BFGS \
                 runs many forwards and backwards in one step: watch it longer, --timeout)",
                seen(trainers)
            )),
        );
        return;
    }
    // Gradients taken with torch.autograd.grad (torch.func's grad transform among them) and
    // no backward: the program may train tensors that are no module's parameters (a dictionary
    // of weights through functional_call), which no step measurement sees. Not known: a warning.
    let taken: u64 = trainers
        .iter()
        .filter_map(|p| p.end.as_ref().and_then(|e| e.grads_taken))
        .sum();
    if taken > 0 {
        let models: usize = trainers.iter().map(|p| p.models.len()).sum();
        out.push(
            Finding::new(Symptom::NoOptimizerStep, Severity::Warn, "run", 0.0)
                .summary(format!(
                    "no optimizer step, no backward call and no update of a module's \
                     parameters was seen ({models} model(s) ran forward), but torch.autograd.grad \
                     was called {taken} time(s): a program that trains tensors of its own \
                     (torch.func's grad over a dictionary of weights used through \
                     functional_call) updates nothing mldebug measures, so its training is not \
                     judged"
                ))
                .number("grads_taken", taken as f64),
        );
        return;
    }
    // Backwards over leaf tensors of no module (no model, no optimizer) none of which reached
    // the leaves of the backward before: gradients of fresh inputs (a saliency map), or new
    // parameter tensors made at each step. No update was seen: what was seen, not a fail.
    let raw: u64 = all
        .iter()
        .filter_map(|p| p.end.as_ref().and_then(|e| e.raw_backwards))
        .sum();
    if raw > 0 {
        out.push(
            Finding::new(Symptom::NoOptimizerStep, Severity::Warn, "run", 0.0)
                .summary(format!(
                    "no model, no optimizer and no update was seen: {raw} backward pass(es)                      reached tensors of the program's own that need a gradient, but no backward                      reached the same tensors as the one before it, so none of them was seen                      being trained (gradients of inputs, such as a saliency map, train nothing;                      a loop that makes new parameter tensors at each step, w = (w - lr *                      w.grad).detach().requires_grad_(), is not measured): there is no training                      here to judge"
                ))
                .number("raw_backwards", raw as f64),
        );
        return;
    }
    let why = if trainers.is_empty() && all.is_empty() {
        // A process writes its trace from its first model or optimizer on: with no trace at
        // all, whether torch was imported is not known (a run timed out while importing it, or
        // one that never trains, looks the same).
        "no process ran a model forward or finished making an optimizer".to_string()
    } else if trainers.is_empty() {
        "torch was imported, but no model ran forward and no optimizer was made".to_string()
    } else {
        seen(trainers)
    };
    out.push(
        Finding::new(Symptom::NoOptimizerStep, Severity::Fail, "run", 0.0).summary(format!(
            "the program ended without a training step ({why}): no parameter was updated, so \
             nothing of a training loop was observed and this is not a pass"
        )),
    );
}

/// What the processes did, from their models, optimizers and end records: forwards with and
/// without gradients, backward calls.
fn seen(trainers: &[&Process]) -> String {
    let models: usize = trainers.iter().map(|p| p.models.len()).sum();
    let ends: Vec<_> = trainers.iter().filter_map(|p| p.end.as_ref()).collect();
    let total = |f: fn(&crate::trace::records::End) -> Option<u64>| -> Option<u64> {
        ends.iter().map(|e| f(e)).sum::<Option<u64>>()
    };
    let mut parts = vec![format!("{models} model(s) ran forward")];
    if let (Some(f), Some(n), Some(b)) = (
        total(|e| e.forwards),
        total(|e| e.nograd_forwards),
        total(|e| e.backwards),
    ) {
        parts.push(format!(
            "{f} forward(s) with gradients, {n} without, {b} backward call(s)"
        ));
        if b == 0 {
            parts.push("no backward, so no gradient and no update".to_string());
        }
    }
    parts.join("; ")
}
