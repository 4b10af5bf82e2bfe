//! `grad-flow`: does every parameter get a useful gradient from the loss?
//!
//! One forward and backward pass on fresh parameters; per named parameter:
//! - **no grad** — the parameter is not in the loss's graph: unused, detached, or upstream of an
//!   op without a backward (candle's fused `rms_norm`, `layer_norm`, `softmax_last_dim`, `rope`;
//!   in PyTorch a `.detach()` or `torch.no_grad()` in the forward). Distinct from a zero gradient;
//! - **all-zero** — connected, but the gradient is exactly zero (dead units, zero init, a mask);
//! - **non-finite** — NaN or infinite values in the gradient;
//! - otherwise the gradient's L2 norm and its ratio to the parameter's norm.
//!
//! Then the first layer's gradient norm against the last hidden layer's (layers ordered by their
//! distance from the loss in the graph): tiny means vanishing, huge means exploding (AutoTrainer's
//! rules). Parameters frozen by hand (PyTorch `requires_grad=False`) never learn and fail, unless
//! they are a LoRA model's base weights; a LoRA model must train exactly its adapters.

mod lora;
mod rows;

pub use lora::Lora;
use lora::{lora_a_at_init, lora_note, lora_problem};
use rows::{buffer_note, cut_lines, grouped_rows, profile, untrained_lines};

use crate::common::{show_command, Ctx};
use mldebug_report::non_finite;
use mldebug_report::{CheckId, Finding, Status, Subject};
use serde::{Deserialize, Serialize};

const ID: CheckId = CheckId::GradFlow;

/// First-layer / last-hidden-layer gradient norm below this is vanishing. AutoTrainer fails at
/// 1e-3 (β1, ICSE'21 Table I) for first/last *including* the output layer; without it the ratio
/// is tighter, so the line sits a decade from both sides of the zoo: clean models 0.24–1.1 over
/// 5 seeds, the ten-layer sigmoid MLP 2.4e-4–9.8e-4.
pub const GRAD_VANISH_RATIO: f64 = 1e-2;
/// ... above this is exploding (AutoTrainer β3 = 70; clean zoo at most 1.1).
pub const GRAD_EXPLODE_RATIO: f64 = 70.0;
/// Between the vanishing ratio and this, warn: gradients already shrink by an order of
/// magnitude through the hidden layers (clean zoo never below 0.24).
pub const GRAD_VANISH_WARN_RATIO: f64 = 1e-1;
/// How many parameter names the one-line summary lists before "+N more".
pub const NAMES_IN_SUMMARY: usize = 4;

/// What the backward pass gave one parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Grad {
    /// Not in the loss's graph.
    None,
    /// Exactly zero everywhere.
    Zero,
    /// This many NaN or infinite values.
    NonFinite {
        /// How many.
        count: usize,
    },
    /// The gradient's L2 norm.
    Norm {
        /// The norm.
        #[serde(with = "non_finite::number")]
        norm: f64,
    },
}

/// One parameter's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParamRow {
    /// The parameter's name, as the model registers it.
    pub name: String,
    /// Its shape.
    pub shape: Vec<usize>,
    /// The L2 norm of its values.
    #[serde(with = "non_finite::number")]
    pub param_norm: f64,
    /// What its gradient was after one backward pass.
    pub grad: Grad,
    /// Position among the parameters in the loss's graph, 0 = closest to the loss.
    #[serde(default)]
    pub depth: Option<usize>,
    /// The order the model creates (registers) it.
    #[serde(default)]
    pub order: Option<usize>,
}

impl ParamRow {
    fn grad_norm(&self) -> Option<f64> {
        match self.grad {
            Grad::Norm { norm } => Some(norm),
            _ => None,
        }
    }
}

/// A variable that is not trained: a buffer (BatchNorm's running statistics, a declared frozen
/// weight, integer values), or a parameter frozen with `requires_grad=False`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Untrained {
    /// The variable's name.
    pub name: String,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Why it is not trained, as a report row says it.
    #[serde(default = "default_buffer_kind")]
    pub kind: String,
}

fn default_buffer_kind() -> String {
    "buffer: not trained".to_string()
}

/// One forward and backward pass on the model's batch, seen from the parameters.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Measurement {
    /// The loss depends on some parameter at all.
    pub loss_requires_grad: bool,
    /// The trained parameters (in any order: the judgement reports them in creation order).
    pub params: Vec<ParamRow>,
    /// Parameters frozen by hand (`requires_grad=False`).
    #[serde(default)]
    pub frozen: Vec<Untrained>,
    /// Buffers: variables the model keeps but does not train.
    #[serde(default)]
    pub buffers: Vec<Untrained>,
    /// Buffer names the model declared that match no variable.
    #[serde(default)]
    pub unknown_declared: Vec<String>,
    /// Traced modules whose input depended on a parameter and whose output did not.
    #[serde(default)]
    pub cuts: Vec<String>,
    /// Whether any traced module ran, so that `cuts` could be seen at all (a model built from
    /// plain candle layers has none: its cuts are "not traced", never 0).
    #[serde(default)]
    pub traced: bool,
    /// The LoRA wrap, when the run trained adapters (`--lora`).
    #[serde(default)]
    pub lora: Option<Lora>,
}

fn list(names: &[&str]) -> String {
    let shown: Vec<&str> = names.iter().take(NAMES_IN_SUMMARY).copied().collect();
    let more = names.len().saturating_sub(NAMES_IN_SUMMARY);
    if more > 0 {
        format!("{} (+{more} more)", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// "1 of 6 parameters gets" / "20 of 21 parameters get".
fn of_total(n: usize, total: usize, one: &str, many: &str) -> String {
    format!(
        "{n} of {total} parameters {}",
        if n == 1 { one } else { many }
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The first (farthest from the loss) and the last hidden weight matrix with a usable gradient.
///
/// The output layer (the weight closest to the loss) is left out: its gradient is the loss's
/// gradient times the activations, not something backpropagated through other weights, and it
/// swings with the output layer's init scale (a small-init head makes every other layer's
/// gradient look tiny next to it: zoo `cnn` first/head = 2e-3 while first/last hidden = 0.4).
fn first_and_last(rows: &[ParamRow]) -> Option<(&ParamRow, &ParamRow)> {
    let mut weights: Vec<&ParamRow> = rows
        .iter()
        .filter(|r| r.shape.len() >= 2 && r.grad_norm().is_some() && r.depth.is_some())
        .collect();
    weights.sort_by_key(|r| r.depth);
    let hidden = weights.get(1..)?;
    if hidden.len() < 2 {
        return None;
    }
    Some((hidden[hidden.len() - 1], hidden[0]))
}

/// The verdict: parameters without a gradient, cuts, frozen weights, vanishing gradients.
pub fn judge(m: &Measurement, ctx: &Ctx) -> Finding {
    if let Some(f) = lora_problem(m) {
        return f.next(show_command(ID));
    }
    if !m.loss_requires_grad {
        return detached(m);
    }
    // One order everywhere (the summary's names, the rows, the plotted profile): the order the
    // model creates its parameters in, by name where that is unknown.
    let ordered = in_creation_order(&m.params);
    let rows = &ordered[..];
    let names_where = |p: &dyn Fn(&ParamRow) -> bool| -> Vec<&str> {
        rows.iter()
            .filter(|r| p(r))
            .map(|r| r.name.as_str())
            .collect()
    };
    let no_grad = names_where(&|r| r.grad == Grad::None);
    let zero = names_where(&|r| r.grad == Grad::Zero && !lora_a_at_init(m, r));
    let non_finite = names_where(&|r| matches!(r.grad, Grad::NonFinite { .. }));
    let frozen: Vec<&str> = if m.lora.is_some() {
        Vec::new()
    } else {
        m.frozen.iter().map(|f| f.name.as_str()).collect()
    };
    let total = rows.len() + frozen.len();
    let layer_ratio = first_and_last(rows).map(|(first, last)| {
        let (a, b) = (
            first.grad_norm().unwrap_or(0.0),
            last.grad_norm().unwrap_or(0.0),
        );
        (first.name.as_str(), last.name.as_str(), a / b)
    });
    let cut_note = if m.cuts.is_empty() {
        String::new()
    } else {
        format!(
            "; the graph is cut at {}",
            list(&m.cuts.iter().map(String::as_str).collect::<Vec<_>>())
        )
    };
    let (status, summary) = if total == 0 {
        (
            Status::Fail,
            "the model has no trainable parameters: every parameter must come from the VarBuilder (candle) or have requires_grad=True (PyTorch)"
                .to_string(),
        )
    } else if !no_grad.is_empty() {
        let hint = match (&ctx.subject, m.cuts.is_empty()) {
            (_, false) => "",
            (Subject::Candle(_), true) => {
                " (unused, detached, or behind a fused op without backward: rms_norm, layer_norm, softmax_last_dim, rope)"
            }
            (Subject::Torch(_), true) => {
                " (unused, or cut off: a .detach(), torch.no_grad(), .data or a round trip through numpy/.item() in the forward)"
            }
        };
        let named = boundary_sentence(rows).unwrap_or_else(|| list(&no_grad));
        (
            Status::Fail,
            format!(
                "{} no gradient: {named}{cut_note}{hint}",
                of_total(no_grad.len(), total, "gets", "get"),
            ),
        )
    } else if !frozen.is_empty() {
        (
            Status::Fail,
            format!(
                "{} frozen (requires_grad=False) and never learn: {}",
                of_total(frozen.len(), total, "is", "are"),
                list(&frozen)
            ),
        )
    } else if !non_finite.is_empty() {
        (
            Status::Fail,
            format!(
                "{} NaN/inf gradients: {}",
                of_total(non_finite.len(), total, "has", "have"),
                list(&non_finite)
            ),
        )
    } else if !zero.is_empty() {
        (
            Status::Fail,
            format!(
                "{} an all-zero gradient (dead units, zero init or a mask): {}",
                of_total(zero.len(), total, "gets", "get"),
                list(&zero)
            ),
        )
    } else if m.lora.is_some() {
        // Adapters are not a stack of layers: their gradients' ratio says nothing about
        // vanishing or exploding (a query adapter's is small next to a value adapter's at init).
        (
            Status::Pass,
            format!("all {total} parameters get finite, non-zero gradients"),
        )
    } else {
        ratio_verdict(layer_ratio, total)
    };
    let (status, summary) = lora_note(m, status, summary);
    let summary = format!("{summary}{}", buffer_note(m));
    let f = Finding::new(ID, status, summary).next(ctx.next_for(ID, status));
    let counts = [no_grad.len(), zero.len(), non_finite.len(), frozen.len()];
    let mut f = with_metrics(f, m, total, counts, layer_ratio);
    f.details = cut_lines(&m.cuts);
    // Where a cut sits matters only when some parameter gets no gradient.
    if !m.traced && !no_grad.is_empty() {
        f.details.push(NOT_TRACED.to_string());
    }
    f.details.extend(grouped_rows(m, rows));
    f.details.extend(untrained_lines(m));
    f.series.push(profile(rows));
    f
}

/// The detail line of a model without traced modules, when a parameter gets no gradient.
pub const NOT_TRACED: &str = "the model's layers are not traced (plain layers, not mldebug_diagnostics::nn), so no module is named as the cut: where the gradient stops is read from which parameters get one, in the order the model creates them";

/// `params` in the order the model creates them (`order`), by name where that is unknown.
fn in_creation_order(params: &[ParamRow]) -> Vec<ParamRow> {
    let mut rows = params.to_vec();
    rows.sort_by(|a, b| {
        (a.order.unwrap_or(usize::MAX), &a.name).cmp(&(b.order.unwrap_or(usize::MAX), &b.name))
    });
    rows
}

/// "everything up to `ln_f` gets no gradient; `head` does", when every parameter's creation
/// order is known.
fn boundary_sentence(rows: &[ParamRow]) -> Option<String> {
    let cut_rows: Vec<crate::cut::Row> = rows
        .iter()
        .map(|r| {
            Some(crate::cut::Row {
                name: &r.name,
                order: r.order?,
                live: r.grad != Grad::None,
            })
        })
        .collect::<Option<_>>()?;
    crate::cut::boundary(&cut_rows)
}

/// A loss computed from detached or constant tensors: no parameter can learn.
fn detached(m: &Measurement) -> Finding {
    let n = m.params.len();
    let mut f = Finding::new(
        ID,
        Status::Fail,
        format!(
            "the loss does not depend on any parameter ({n} parameters): it is computed from detached or constant tensors"
        ),
    )
    .metric("params", n as f64)
    .metric("params_without_grad", n as f64)
    .next(show_command(ID));
    if !m.buffers.is_empty() {
        f = f.metric("buffers", m.buffers.len() as f64);
    }
    f.details = cut_lines(&m.cuts);
    f.details.extend(untrained_lines(m));
    f
}

/// The numbers behind the verdict; `counts` are the parameters without a gradient, with an
/// all-zero one, with a non-finite one, and frozen.
fn with_metrics(
    f: Finding,
    m: &Measurement,
    total: usize,
    counts: [usize; 4],
    layer_ratio: Option<(&str, &str, f64)>,
) -> Finding {
    let [no_grad, zero, non_finite, frozen] = counts;
    let mut f = f
        .metric("params", total as f64)
        .metric("params_without_grad", no_grad as f64)
        .metric("params_zero_grad", zero as f64)
        .metric("params_non_finite_grad", non_finite as f64);
    // Cuts are seen only through traced modules: without any, the count is unknown, not 0.
    if m.traced {
        f = f.metric("graph_cuts", m.cuts.len() as f64);
    }
    if frozen > 0 {
        f = f.metric("params_frozen", frozen as f64);
    }
    // Only for a model that has buffers (the metric is absent, not 0, for the others).
    if !m.buffers.is_empty() {
        f = f.metric("buffers", m.buffers.len() as f64);
    }
    if let Some(l) = &m.lora {
        f = f.metric("lora_adapters", l.adapter_params.len() as f64);
    }
    if let Some((_, _, r)) = layer_ratio {
        f = f.metric("first_last_ratio", r);
    }
    if let Some((first, _)) = first_and_last(&m.params) {
        f = f.metric("first_layer_grad_norm", first.grad_norm().unwrap_or(0.0));
    }
    let norms: Vec<f64> = m.params.iter().filter_map(ParamRow::grad_norm).collect();
    if !norms.is_empty() {
        f = f.metric(
            "grad_norm_total",
            norms.iter().map(|n| n * n).sum::<f64>().sqrt(),
        );
    }
    f
}

/// The verdict from the first/last hidden layer gradient ratio, once every parameter has a
/// finite, non-zero gradient.
fn ratio_verdict(layer_ratio: Option<(&str, &str, f64)>, total: usize) -> (Status, String) {
    match layer_ratio {
        Some((first, last, r)) if r < GRAD_VANISH_RATIO => (
            Status::Fail,
            format!("vanishing gradients: the first layer's gradient ({first}) is {r:.1e}x the last hidden layer's ({last})"),
        ),
        Some((first, last, r)) if r > GRAD_EXPLODE_RATIO => (
            Status::Fail,
            format!("exploding gradients: the first layer's gradient ({first}) is {r:.1e}x the last hidden layer's ({last})"),
        ),
        Some((first, last, r)) if r < GRAD_VANISH_WARN_RATIO => (
            Status::Warn,
            format!("gradients shrink towards the input: the first layer's ({first}) is {r:.1e}x the last hidden layer's ({last})"),
        ),
        _ => (
            Status::Pass,
            format!(
                "all {total} parameters get finite, non-zero gradients{}",
                layer_ratio
                    .map(|(_, _, r)| format!(" (first/last hidden layer gradient ratio {r:.2})"))
                    .unwrap_or_default()
            ),
        ),
    }
}

#[cfg(test)]
mod tests;
