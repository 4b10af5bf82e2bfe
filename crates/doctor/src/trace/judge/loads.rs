//! `weights-partly-loaded`: a weights load (`load_state_dict`, transformers' `from_pretrained`) that
//! left parameters of the module at their initial values. The invariant: a load the program
//! makes fills the module's parameters; the keys it reports missing are parameters that keep
//! their random initialisation.
//!
//! Severity, by what the load left, as a share of the module's parameter elements:
//! - fail: half or more left at init while the checkpoint held tensors that went nowhere
//!   (unexpected keys: a `module.` or `_orig_mod.` prefix, a checkpoint's outer dict), or the
//!   call filled nothing at all; for `from_pretrained`, half or more newly initialised;
//! - warn: a parameter left at init whose shape and last name part a checkpoint tensor under
//!   another name has (a renamed layer); half or more left at init however the checkpoint
//!   looked; pretrained body layers re-initialised for a shape mismatch
//!   (`ignore_mismatched_sizes=True`); parameters left at init that no optimizer trains in
//!   the window (an evaluation of a random head);
//! - info: a new layer left at init that an optimizer then trains (a new classification
//!   head: normal fine-tuning), or checkpoint tensors the module has no place for.

use super::pct;
use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;
use crate::trace::records::Load;

/// Half the module's parameter elements: a load that leaves more at init leaves a mostly
/// untrained model, whatever the rest holds.
const MOST: f64 = 0.5;
/// Characters of a key name shown.
const NAME_CHARS: usize = 80;

pub(super) fn judge(p: &Process, out: &mut Vec<Finding>) {
    let manual = p.optimizers.iter().any(|o| o.manual);
    let mut found: Vec<Finding> = p
        .loads
        .iter()
        .filter_map(|l| judge_one(p, l, manual))
        .collect();
    // One finding per process: the worst load's (the first of equals), the others counted.
    found.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.step.total_cmp(&b.step)));
    let others = found.len().saturating_sub(1);
    if let Some(mut f) = found.into_iter().next() {
        if others > 0 {
            f.details.push(format!(
                "{others} other load(s) of this process also left parameters"
            ));
        }
        out.push(f);
    }
}

/// What one load left at init, after later loads and what the optimizers held.
struct Left {
    /// Elements left at init and not filled by a later load.
    numel: u64,
    /// Their share of the module's parameter elements.
    share: f64,
    /// Elements of those an optimizer about to step held (trainable), or that no longer exist.
    trained: u64,
}

fn left(p: &Process, l: &Load, manual: bool) -> Left {
    let refilled: u64 = p
        .loads
        .iter()
        .flat_map(|o| &o.refills)
        .filter(|r| r.load == l.load)
        .map(|r| r.numel)
        .sum();
    let numel = l.missing_numel.saturating_sub(refilled);
    let share = if l.parameters > 0 {
        numel as f64 / l.parameters as f64
    } else {
        0.0
    };
    let held: u64 = p
        .loads_trained
        .iter()
        .filter(|t| t.load == l.load)
        .map(|t| t.numel)
        .sum();
    let gone = p
        .loads_trained
        .iter()
        .filter(|t| t.load == l.load)
        .map(|t| t.gone)
        .max()
        .unwrap_or(0);
    // A hand-written update steps every parameter that gets a gradient: counted as trained.
    let trained = if manual { numel } else { held + gone };
    Left {
        numel,
        share,
        trained,
    }
}

fn judge_one(p: &Process, l: &Load, manual: bool) -> Option<Finding> {
    let left = left(p, l, manual);
    let pretrained = l.source == "from_pretrained";
    let what = if pretrained {
        format!("from_pretrained of {}", class(l))
    } else {
        format!("{}.load_state_dict(strict={})", class(l), strict(l))
    };
    let share = pct(left.share);
    let untrained = left.numel > left.trained;
    let filled_nothing = !pretrained && l.keys.is_some_and(|k| k <= l.unexpected);
    let (severity, summary) = if left.numel == 0 {
        if pretrained || l.unexpected == 0 {
            return None;
        }
        (
            Severity::Info,
            format!(
                "{what} filled every parameter; {} key(s) of the checkpoint had no place in \
                 the module and were not loaded",
                l.unexpected
            ),
        )
    } else if pretrained && left.share >= MOST {
        (
            Severity::Fail,
            format!(
                "{what} newly initialised {share} of the model's parameter elements: the \
                 checkpoint does not fit this model class (another architecture, or keys \
                 under other names)"
            ),
        )
    } else if !pretrained && left.share >= MOST && (l.unexpected > 0 || filled_nothing) {
        (
            Severity::Fail,
            format!(
                "{what} left {share} of the module's parameter elements at their initial \
                 values{}: the model trains from random init",
                if l.unexpected > 0 {
                    format!(
                        ", while {} key(s) of the checkpoint went unused",
                        l.unexpected
                    )
                } else {
                    " (it filled nothing)".to_string()
                }
            ),
        )
    } else if l.renamed > 0 {
        (
            Severity::Warn,
            format!(
                "{what} left {} parameter tensor(s) ({share} of the elements) at their \
                 initial values while the checkpoint holds tensors of the same shapes under \
                 other names: a layer renamed between the checkpoint and the model",
                l.missing_tensors
            ),
        )
    } else if pretrained && l.mismatched_base_numel.unwrap_or(0) > 0 {
        (
            Severity::Warn,
            format!(
                "{what} re-initialised {} pretrained body layer(s) whose shapes differ from \
                 the checkpoint's ({} elements){}",
                l.mismatched,
                l.mismatched_base_numel.unwrap_or(0),
                if l.ignore_mismatched_sizes == Some(true) {
                    ": ignore_mismatched_sizes=True discards them silently"
                } else {
                    ""
                }
            ),
        )
    } else if left.share >= MOST {
        (
            Severity::Warn,
            format!(
                "{what} filled only {} of the module's parameter elements: {share} keep \
                 their initial values",
                pct(1.0 - left.share)
            ),
        )
    } else if untrained {
        (
            Severity::Warn,
            format!(
                "{what} left {} parameter tensor(s) ({share} of the elements) at their \
                 initial values, and no optimizer trains them in the steps watched: \
                 whatever uses them computes with random weights",
                l.missing_tensors
            ),
        )
    } else {
        (
            Severity::Info,
            format!(
                "{what} left {} new parameter tensor(s) ({share} of the elements) at their \
                 initial values, and the program trains them: a new layer (such as a \
                 classification head) fine-tuned from scratch",
                l.missing_tensors
            ),
        )
    };
    let mut details = Vec::new();
    if !l.missing_names.is_empty() {
        details.push(format!(
            "left at init: {}",
            names(&l.missing_names, l.missing)
        ));
    }
    if !l.mismatched_names.is_empty() {
        details.push(format!(
            "shape mismatch, re-initialised: {}",
            names(&l.mismatched_names, l.mismatched)
        ));
    }
    if !l.unexpected_names.is_empty() && severity > Severity::Info {
        details.push(format!(
            "in the checkpoint, unused: {}",
            names(&l.unexpected_names, l.unexpected)
        ));
    }
    // The cause, else a few names of what was left, belong in the line a person reads.
    let summary = match cause(l) {
        Some(c) => format!("{summary}. {c}"),
        None if !l.missing_names.is_empty() && severity > Severity::Info => format!(
            "{summary} ({})",
            names(&l.missing_names[..l.missing_names.len().min(3)], l.missing)
        ),
        None => summary,
    };
    let f = Finding::new(
        Symptom::WeightsPartlyLoaded,
        severity,
        "load",
        l.step as f64,
    )
    .summary(summary)
    .at(l.location.clone())
    .number("left_at_init_share", left.share)
    .number("left_at_init_numel", left.numel as f64)
    .number("parameters", l.parameters as f64)
    .number("missing_keys", l.missing as f64)
    .number("unexpected_keys", l.unexpected as f64)
    .details(details);
    Some(f)
}

/// The likely cause, from how the unused keys relate to the missing ones.
fn cause(l: &Load) -> Option<String> {
    if let Some(prefix) = &l.unexpected_prefix {
        if l.unexpected_prefix_matches > 0 {
            return Some(format!(
                "{} of the checkpoint's unused keys are the missing ones behind a `{}.` prefix \
                 ({}{}): strip it before loading ({{k.removeprefix(\"{}.\"): v for k, v in \
                 state.items()}}) or save the unwrapped module's state_dict",
                l.unexpected_prefix_matches,
                shown(prefix),
                prefix_origin(prefix),
                example(&l.unexpected_names),
                shown(prefix),
            ));
        }
    }
    if let Some(prefix) = &l.missing_prefix {
        if l.missing_prefix_matches > 0 {
            return Some(format!(
                "{} of the missing keys are the checkpoint's keys behind a `{}.` prefix \
                 ({}{}): load into the wrapped module (`model.module` or `model._orig_mod`) \
                 instead",
                l.missing_prefix_matches,
                shown(prefix),
                prefix_origin(prefix),
                example(&l.missing_names),
            ));
        }
    }
    if l.unexpected_mappings > 0 {
        return Some(format!(
            "{} unused key(s) hold dicts, not tensors ({}): the checkpoint's outer dict was \
             passed; load its state dict entry (e.g. checkpoint[\"model\"])",
            l.unexpected_mappings,
            names(
                &l.unexpected_names[..l.unexpected_names.len().min(3)],
                l.unexpected
            )
        ));
    }
    if l.renamed > 0 {
        return Some(format!(
            "Left: {}; unused: {}: map the old names to the new ones before loading",
            names(
                &l.missing_names[..l.missing_names.len().min(2)],
                l.missing_tensors
            ),
            names(
                &l.unexpected_names[..l.unexpected_names.len().min(3)],
                l.unexpected
            )
        ));
    }
    None
}

fn prefix_origin(prefix: &str) -> &'static str {
    match prefix {
        "module" => "DistributedDataParallel or DataParallel adds it",
        "_orig_mod" => "torch.compile's wrapper adds it",
        _ => "a wrapper or a parent module's attribute name",
    }
}

/// `, e.g. `module.fc.weight`` from the first name of a list, or nothing.
fn example(list: &[String]) -> String {
    list.first()
        .map(|n| format!(", e.g. `{}`", shown(n)))
        .unwrap_or_default()
}

fn class(l: &Load) -> String {
    l.class.as_deref().map(shown).unwrap_or("a module".into())
}

fn strict(l: &Load) -> &'static str {
    match l.strict {
        Some(true) => "True",
        Some(false) => "False",
        None => "?",
    }
}

fn names(list: &[String], total: u64) -> String {
    let shown: Vec<String> = list.iter().map(|n| format!("`{}`", shown(n))).collect();
    let more = (total as usize).saturating_sub(list.len());
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// A name from the trace, bounded and with control characters escaped.
fn shown(s: &str) -> String {
    let cut: String = s.chars().take(NAME_CHARS).collect();
    let more = if cut.len() < s.len() { "…" } else { "" };
    format!("{}{more}", cut.escape_debug())
}
