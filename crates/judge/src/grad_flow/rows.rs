//! grad-flow's report lines: the parameter rows (grouped live and dead), the buffers and frozen
//! parameters, the cuts, and the gradient profile for plots.

use super::lora::lora_a_at_init;
use super::{list, plural, Grad, Measurement, ParamRow};
use mldebug_report::Series;

pub(super) fn cut_lines(cuts: &[String]) -> Vec<String> {
    cuts.iter()
        .map(|m| format!("gradient cut at module `{m}`: its input depends on parameters, its output does not"))
        .collect()
}

/// One row per buffer and frozen parameter, and one per declared buffer name that matches
/// nothing.
pub(super) fn untrained_lines(m: &Measurement) -> Vec<String> {
    let frozen_kind = if m.lora.is_some() {
        "frozen base weight (LoRA trains the adapters)"
    } else {
        "frozen: requires_grad=False, never trained"
    };
    let rows = m
        .buffers
        .iter()
        .map(|b| format!("{} {:?}: {}", b.name, b.shape, b.kind))
        .chain(
            m.frozen
                .iter()
                .map(|b| format!("{} {:?}: {frozen_kind}", b.name, b.shape)),
        );
    let unknown = m.unknown_declared.iter().map(|d| {
        format!("DebugModel::buffers names `{d}`, which matches no variable of the model")
    });
    rows.chain(unknown).collect()
}

/// "; 2 buffers not trained: bn.running_mean, bn.running_var" (nothing without buffers).
pub(super) fn buffer_note(m: &Measurement) -> String {
    match m.buffers.len() {
        0 => String::new(),
        n => format!(
            "; {n} buffer{} not trained: {}",
            plural(n),
            list(
                &m.buffers
                    .iter()
                    .map(|b| b.name.as_str())
                    .collect::<Vec<_>>()
            )
        ),
    }
}

/// The gradient profile: one point per parameter, in the order of `rows` (the rows' and the
/// summary's order), so the dead ones show too. A gradient that is all zero, non-finite or
/// absent is drawn at 0 (nothing to draw on a log axis) and its label says which.
pub(super) fn profile(rows: &[ParamRow]) -> Series {
    let (points, labels) = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let (value, label) = match r.grad {
                Grad::Norm { norm } => (norm, r.name.clone()),
                Grad::Zero => (0.0, format!("{} (all-zero gradient)", r.name)),
                Grad::NonFinite { .. } => (0.0, format!("{} (non-finite gradient)", r.name)),
                Grad::None => (0.0, format!("{} (no gradient)", r.name)),
            };
            ([i as f64, value], label)
        })
        .unzip();
    Series {
        name: "grad_norm".to_string(),
        x_label: "parameter".to_string(),
        y_label: "gradient L2 norm".to_string(),
        points,
        labels,
    }
}

/// A group larger than this is one line of names (in creation order) rather than a row each,
/// so that no deciding line is pushed out of view.
const ROWS_PER_GROUP: usize = 6;

/// The parameter rows, in the order of `rows` (creation order, as the judgement sorts them).
/// When some get a gradient and some do not, the two groups apart, the smaller one first (the
/// two `head` parameters that learn are the clue among 28 that do not).
pub(super) fn grouped_rows(m: &Measurement, rows: &[ParamRow]) -> Vec<String> {
    let (dead, live): (Vec<&ParamRow>, Vec<&ParamRow>) =
        rows.iter().partition(|r| r.grad == Grad::None);
    if dead.is_empty() || live.is_empty() {
        return rows.iter().map(|r| row_line(m, r)).collect();
    }
    let total = rows.len();
    let group = |title: &str, group: &[&ParamRow]| -> Vec<String> {
        let head = format!("{title} ({} of {total})", group.len());
        if group.len() > ROWS_PER_GROUP {
            let names: Vec<&str> = group.iter().map(|r| r.name.as_str()).collect();
            vec![format!("{head}: {}", names.join(", "))]
        } else {
            std::iter::once(format!("{head}:"))
                .chain(group.iter().map(|r| format!("  {}", row_line(m, r))))
                .collect()
        }
    };
    let live_lines = group("get a gradient", &live);
    let dead_lines = group("get no gradient", &dead);
    if live.len() <= dead.len() {
        [live_lines, dead_lines].concat()
    } else {
        [dead_lines, live_lines].concat()
    }
}

fn row_line(m: &Measurement, r: &ParamRow) -> String {
    let state = match &r.grad {
        Grad::None => "no grad (not in the loss's graph)".to_string(),
        Grad::Zero if lora_a_at_init(m, r) => {
            "all-zero grad (expected at init: its lora_B starts at zero)".to_string()
        }
        Grad::Zero => "all-zero grad".to_string(),
        Grad::NonFinite { count } => format!("{count} non-finite grad values"),
        Grad::Norm { norm } => {
            let ratio = if r.param_norm > 0.0 {
                norm / r.param_norm
            } else {
                f64::INFINITY
            };
            format!("grad norm {norm:.3e}, grad/param {ratio:.3e}")
        }
    };
    format!("{} {:?}: {state}", r.name, r.shape)
}
