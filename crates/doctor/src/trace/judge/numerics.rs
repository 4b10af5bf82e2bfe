//! Non-finite values: the first loss that is not finite, the first module whose output is not,
//! the first gradient, and the op at the limit of its domain in the loss's graph; and the batch
//! behind each loss spike the log detector finds.

use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;
use crate::trace::records::SaturatedOp;
use mldebug_text::number::grouped as group;

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
        // What the module was given tells where the value was born: its own weights already
        // not finite (a step wrote NaN into them), its input already not (the batch, or an op
        // outside any module), or neither (the module itself made it).
        let why = match (f.parameters_finite, f.inputs_finite) {
            (Some(false), _) => {
                ", whose own weights were already not finite (an earlier step wrote NaN into them)"
            }
            (_, Some(false)) => {
                ", whose input was already not finite (the batch itself, or an op outside any module)"
            }
            (Some(true), Some(true)) => ", from finite inputs and weights",
            _ => "",
        };
        parts.push(format!(
            "the first module whose output was not finite: `{}`{}{why}",
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
    // The graph of the first non-finite loss, else a heavy step's: an op at its limit there is
    // where the value (or the gradient that wrote NaN into the weights) came from.
    let walked = p
        .saturation
        .iter()
        .filter(|w| !w.ops.is_empty() && w.step <= any.step)
        .min_by_key(|w| (w.when != "loss", w.step));
    let mut lines: Vec<String> = frames.iter().map(|f| format!("at {f}")).collect();
    if let Some(w) = walked {
        parts.push(format!(
            "in the graph of step {}'s loss, {}",
            w.step,
            describe(&w.ops[0])
        ));
        lines.extend(also(&w.ops));
        lines.push(fix(&w.ops[0]).to_string());
    }
    out.push(
        Finding::new(Symptom::Nonfinite, Severity::Fail, "loss", any.step as f64)
            .summary(parts.join("; "))
            .number("step", any.step as f64)
            .details(lines)
            .at(frames.first().cloned()),
    );
}

/// `op-at-limit`: on a heavy step whose loss was finite, an op in the loss's graph had inputs
/// at the limit of its domain. At the singular point its value or its derivative is infinite,
/// so its gradient is not finite even where a mask keeps the value out of the loss (0 x inf is
/// NaN); between 0 and the format's smallest normal number (subnormal) a log is still finite,
/// and one more halving of its input makes it -inf. Either is a NaN on its way, whatever the
/// program: no threshold is tuned, the limits are the format's.
pub(super) fn judge_limits(p: &Process, out: &mut Vec<Finding>) {
    let Some(w) = p
        .saturation
        .iter()
        .find(|w| w.when == "heavy" && w.loss_finite && !w.ops.is_empty())
    else {
        return;
    };
    let first = &w.ops[0];
    let at_limit = first.singular + first.subnormal;
    let mut lines = also(&w.ops);
    if first.singular > 0 {
        lines.push(
            "the loss is finite, so a mask or `torch.where` keeps those values out of it; their \
             gradient still passes through the op (0 x inf is NaN), so the step writes NaN into \
             the weights or a GradScaler skips it"
                .to_string(),
        );
    }
    lines.push(fix(first).to_string());
    out.push(
        Finding::new(Symptom::OpAtLimit, Severity::Warn, "loss", w.step as f64)
            .summary(format!(
                "on step {} (the loss still finite), {}",
                w.step,
                describe(first)
            ))
            .number("step", w.step as f64)
            .number("inputs_at_limit", at_limit as f64)
            .number("inputs", first.elements as f64)
            .details(lines),
    );
}

/// The ops of a walk after its first, a line each.
fn also(ops: &[SaturatedOp]) -> Vec<String> {
    ops.iter()
        .skip(1)
        .map(|o| format!("also {}", describe(o)))
        .collect()
}

/// What one op at its limit received, in words.
fn describe(o: &SaturatedOp) -> String {
    let dtype = o.dtype.as_deref().unwrap_or("float32");
    // what a division receives at its limit is its denominator
    let (one, many) = if o.op == "div" {
        ("its denominator", "denominators")
    } else {
        ("its one input", "inputs")
    };
    let of = |k: u64| {
        if o.elements == 1 {
            one.to_string()
        } else {
            format!("{} of {} {many}", group(k), group(o.elements))
        }
    };
    let on = match o.input.as_deref() {
        Some("scalar") => " (a single number)".to_string(),
        Some(name) => format!(" (parameter `{name}`)"),
        None => String::new(),
    };
    let smallest = o
        .min
        .map(|m| format!(", smallest {m:.3e}"))
        .unwrap_or_default();
    let head = match o.op.as_str() {
        "log" | "log2" | "log10" if o.singular > 0 => {
            format!("`{}` of a value <= 0 in {}", o.op, of(o.singular))
        }
        "log" | "log2" | "log10" => format!(
            "`{}` of a value below {dtype}'s smallest normal number in {}{smallest}",
            o.op,
            of(o.subnormal)
        ),
        "log1p" => format!("`log1p` of a value <= -1 in {}", of(o.singular)),
        "div" if o.singular > 0 => format!("a division by 0 in {}", of(o.singular)),
        "div" => format!(
            "a division by a value below {dtype}'s smallest normal number in {}{smallest}",
            of(o.subnormal)
        ),
        "reciprocal" | "rsqrt" => {
            format!("`{}` of 0 (an infinite result) in {}", o.op, of(o.singular))
        }
        "exp" => format!(
            "`exp` past {dtype}'s largest value (an infinite result) in {}",
            of(o.singular)
        ),
        "sqrt" => format!(
            "`sqrt` at 0 (its derivative 1/(2 sqrt x) is infinite) or of a negative value in {}",
            of(o.singular)
        ),
        "acos" | "asin" => format!(
            "`{}` at +-1 (its derivative is infinite) or beyond in {}",
            o.op,
            of(o.singular)
        ),
        "pow" => format!(
            "`x ** {}` at 0 (its derivative is infinite) or of a negative value in {}",
            o.exponent
                .map(|e| e.to_string())
                .unwrap_or_else(|| "p".into()),
            of(o.singular)
        ),
        other => format!("`{other}` at its limit in {}", of(o.singular + o.subnormal)),
    };
    format!("{head}{on}")
}

/// The usual repair for an op at its limit.
fn fix(o: &SaturatedOp) -> &'static str {
    match o.op.as_str() {
        "log" | "log2" | "log10" | "log1p" => {
            "fix: take the log of a probability with `log_softmax` / `F.logsigmoid` (or a \
             loss that takes logits), or clamp its input first (`x.clamp_min(eps)`); make the \
             input safe before the op, not the output after it"
        }
        "div" | "reciprocal" | "rsqrt" => {
            "fix: keep the denominator away from 0 (`d.clamp_min(eps)` or `d + eps`; a floor \
             for an annealed value), or mask before dividing, not after"
        }
        "exp" => "fix: work in log space (`logsumexp`, `log_softmax`) or clamp the exponent",
        "sqrt" | "pow" => {
            "fix: add eps inside (`sqrt(x + eps)`), or use a norm that handles 0 \
             (`torch.linalg.vector_norm`)"
        }
        _ => "fix: clamp the input inside the domain (`x.clamp(-1 + eps, 1 - eps)`)",
    }
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
