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

use crate::common::{show_command, Ctx};
use mldebug_report::non_finite;
use mldebug_report::{CheckId, Finding, Series, Status, Subject};
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
    NonFinite { count: usize },
    /// The gradient's L2 norm.
    Norm {
        #[serde(with = "non_finite::number")]
        norm: f64,
    },
}

/// One parameter's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParamRow {
    pub name: String,
    pub shape: Vec<usize>,
    #[serde(with = "non_finite::number")]
    pub param_norm: f64,
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
    pub name: String,
    pub shape: Vec<usize>,
    /// Why it is not trained, as a report row says it.
    #[serde(default = "default_buffer_kind")]
    pub kind: String,
}

fn default_buffer_kind() -> String {
    "buffer: not trained".to_string()
}

/// A LoRA-wrapped model: which modules the adapters landed on.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Lora {
    /// The target module names asked for.
    pub targets: Vec<String>,
    /// The modules that got adapters.
    #[serde(default)]
    pub matched_modules: Vec<String>,
    /// The adapters' trainable parameters.
    #[serde(default)]
    pub adapter_params: Vec<String>,
    /// Why wrapping failed (peft's message), if it did.
    #[serde(default)]
    pub error: Option<String>,
    /// Names of the model's linear layers, for a hint when no target matched.
    #[serde(default)]
    pub linear_modules: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Measurement {
    /// The loss depends on some parameter at all.
    pub loss_requires_grad: bool,
    /// The trained parameters, sorted by name.
    pub params: Vec<ParamRow>,
    /// Parameters frozen by hand (`requires_grad=False`).
    #[serde(default)]
    pub frozen: Vec<Untrained>,
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

fn cut_lines(cuts: &[String]) -> Vec<String> {
    cuts.iter()
        .map(|m| format!("gradient cut at module `{m}`: its input depends on parameters, its output does not"))
        .collect()
}

/// One row per buffer and frozen parameter, and one per declared buffer name that matches
/// nothing.
fn untrained_lines(m: &Measurement) -> Vec<String> {
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
fn buffer_note(m: &Measurement) -> String {
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

/// A LoRA adapter's down-projection: its gradient is exactly zero at init because the paired
/// up-projection starts at zero (peft's default), so a zero there is expected.
fn lora_a_at_init(m: &Measurement, row: &ParamRow) -> bool {
    m.lora.is_some() && row.name.contains("lora_A") && row.grad == Grad::Zero
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

pub fn judge(m: &Measurement, ctx: &Ctx) -> Finding {
    if let Some(f) = lora_problem(m) {
        return f.next(show_command(ID));
    }
    if !m.loss_requires_grad {
        return detached(m);
    }
    let rows = &m.params;
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
    if !m.traced {
        f.details.push(NOT_TRACED.to_string());
    }
    f.details.extend(grouped_rows(m, rows));
    f.details.extend(untrained_lines(m));
    f.series.push(profile(rows));
    f
}

/// The detail line of a model without traced modules.
pub const NOT_TRACED: &str = "graph cuts: not traced (no traced layers ran; the cut is placed from which parameters get a gradient and the order the model creates them)";

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

/// A LoRA model whose adapters landed nowhere: nothing trains, whatever the rest says.
fn lora_problem(m: &Measurement) -> Option<Finding> {
    let l = m.lora.as_ref()?;
    if l.error.is_none() && !l.matched_modules.is_empty() && !l.adapter_params.is_empty() {
        return None;
    }
    let why = l
        .error
        .as_deref()
        .and_then(|e| e.lines().next())
        .map(|e| format!(" (peft: {e})"))
        .unwrap_or_default();
    let names = if l.linear_modules.is_empty() {
        String::new()
    } else {
        format!(
            "; the model's linear layers are named {}",
            l.linear_modules.join(", ")
        )
    };
    let mut f = Finding::new(
        ID,
        Status::Fail,
        format!(
            "the LoRA targets {} match no module, so no adapter trains{why}{names}",
            l.targets.join(", ")
        ),
    )
    .metric("lora_adapters", 0.0)
    .metric("params", m.params.len() as f64);
    f.details = l
        .error
        .iter()
        .flat_map(|e| e.lines())
        .map(str::to_string)
        .collect();
    Some(f)
}

/// With LoRA, the adapters must be the trainable parameters: base weights trained beside them
/// warn (they cost the memory LoRA is meant to save), unless something worse was found.
fn lora_note(m: &Measurement, status: Status, summary: String) -> (Status, String) {
    let Some(l) = &m.lora else {
        return (status, summary);
    };
    let extra: Vec<&str> = m
        .params
        .iter()
        .map(|r| r.name.as_str())
        .filter(|n| !l.adapter_params.iter().any(|a| a == n))
        .collect();
    let adapters = format!(
        "{} LoRA adapter tensor{} on {} module{}",
        l.adapter_params.len(),
        plural(l.adapter_params.len()),
        l.matched_modules.len(),
        plural(l.matched_modules.len())
    );
    match status {
        Status::Pass if !extra.is_empty() => (
            Status::Warn,
            format!(
                "{summary}; but {} base parameter{} train beside the {adapters}: {}",
                extra.len(),
                plural(extra.len()),
                list(&extra)
            ),
        ),
        Status::Pass => (
            status,
            format!("{summary}; exactly the {adapters} train, the base weights are frozen"),
        ),
        _ => (status, summary),
    }
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

/// The gradient profile: one point per parameter, so the dead ones show too. A gradient that
/// is all zero, non-finite or absent is drawn at 0 (nothing to draw on a log axis) and its
/// label says which.
fn profile(rows: &[ParamRow]) -> Series {
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

/// The parameter rows. When some get a gradient and some do not, the two groups apart, the
/// smaller one first (the two `head` parameters that learn are the clue among 28 that do not),
/// each in the order the model creates them.
fn grouped_rows(m: &Measurement, rows: &[ParamRow]) -> Vec<String> {
    let mut sorted: Vec<&ParamRow> = rows.iter().collect();
    sorted.sort_by(|a, b| (a.order, &a.name).cmp(&(b.order, &b.name)));
    let (dead, live): (Vec<&ParamRow>, Vec<&ParamRow>) =
        sorted.into_iter().partition(|r| r.grad == Grad::None);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::test_ctx;
    use mldebug_report::Task;

    fn row(name: &str, grad: Grad, depth: usize) -> ParamRow {
        ParamRow {
            name: name.into(),
            shape: vec![4, 4],
            param_norm: 1.0,
            grad,
            depth: Some(depth),
            order: None,
        }
    }

    fn norm(x: f64) -> Grad {
        Grad::Norm { norm: x }
    }

    fn judged(m: &Measurement) -> Finding {
        judge(m, &test_ctx(Task::Classification))
    }

    #[test]
    fn each_gradient_state_and_the_layer_ratio() {
        let mut m = Measurement {
            loss_requires_grad: true,
            params: vec![
                row("a", norm(1.0), 3),
                row("b", norm(1.0), 2),
                row("c", norm(1.0), 1),
                row("head", norm(1.0), 0),
            ],
            ..Measurement::default()
        };
        assert_eq!(judged(&m).status, Status::Pass);
        m.params[0].grad = norm(1e-4);
        let f = judged(&m);
        assert!(f.summary.starts_with("vanishing"), "{}", f.summary);
        m.params[0].grad = Grad::None;
        assert!(judged(&m)
            .summary
            .starts_with("1 of 4 parameters gets no gradient: a"));
        m.params[0].grad = Grad::Zero;
        assert!(judged(&m).summary.contains("all-zero"));
        m.params[0].grad = Grad::NonFinite { count: 3 };
        assert!(judged(&m).summary.contains("NaN/inf"));
        m.loss_requires_grad = false;
        assert!(judged(&m).summary.starts_with("the loss does not depend"));
    }

    #[test]
    fn frozen_by_hand_fails_but_lora_base_weights_do_not() {
        let frozen = Untrained {
            name: "fc1.weight".into(),
            shape: vec![4, 4],
            kind: "frozen: requires_grad=False".into(),
        };
        let mut m = Measurement {
            loss_requires_grad: true,
            params: vec![row("fc2.weight", norm(1.0), 0)],
            frozen: vec![frozen],
            ..Measurement::default()
        };
        let f = judged(&m);
        assert_eq!(f.status, Status::Fail);
        assert!(
            f.summary.contains("frozen (requires_grad=False)"),
            "{}",
            f.summary
        );
        m.params = vec![
            row("q.lora_A.default.weight", Grad::Zero, 1),
            row("q.lora_B.default.weight", norm(0.5), 0),
        ];
        m.lora = Some(Lora {
            targets: vec!["q".into()],
            matched_modules: vec!["layers.0.q".into()],
            adapter_params: m.params.iter().map(|r| r.name.clone()).collect(),
            ..Lora::default()
        });
        let f = judged(&m);
        assert_eq!(f.status, Status::Pass, "{}", f.summary);
        assert!(
            f.summary.contains("exactly the 2 LoRA adapter tensors"),
            "{}",
            f.summary
        );
    }

    #[test]
    fn lora_targets_that_match_nothing_fail_and_name_the_layers() {
        let m = Measurement {
            loss_requires_grad: true,
            lora: Some(Lora {
                targets: vec!["q_prj".into()],
                error: Some("Target modules {'q_prj'} not found in the base model.".into()),
                linear_modules: vec!["q_proj".into(), "v_proj".into()],
                ..Lora::default()
            }),
            ..Measurement::default()
        };
        let f = judged(&m);
        assert_eq!(f.status, Status::Fail);
        assert!(f.summary.contains("q_prj match no module"), "{}", f.summary);
        assert!(f.summary.contains("q_proj, v_proj"), "{}", f.summary);
    }

    #[test]
    fn a_cut_without_traced_layers_is_named_from_the_creation_order() {
        // Created embed, ln_f, head; the alphabet would put head first.
        let mut rows = vec![
            row("embed.weight", Grad::None, 2),
            row("head.weight", norm(0.5), 0),
            row("ln_f.weight", Grad::None, 1),
        ];
        for (r, order) in rows.iter_mut().zip([0, 2, 1]) {
            r.order = Some(order);
        }
        let m = Measurement {
            loss_requires_grad: true,
            params: rows,
            ..Measurement::default()
        };
        let f = judged(&m);
        assert_eq!(f.status, Status::Fail);
        assert!(
            f.summary
                .starts_with("2 of 3 parameters get no gradient: everything up to `ln_f`"),
            "{}",
            f.summary
        );
        assert!(f.summary.contains("`head` does"), "{}", f.summary);
        assert!(!f.metrics.contains_key("graph_cuts"), "not traced is not 0");
        assert!(f.details.iter().any(|d| d == NOT_TRACED), "{:?}", f.details);
        let live = f
            .details
            .iter()
            .position(|d| d == "get a gradient (1 of 3):");
        let dead = f
            .details
            .iter()
            .position(|d| d == "get no gradient (2 of 3):");
        assert!(live.unwrap() < dead.unwrap(), "{:?}", f.details);
        assert!(f.details[live.unwrap() + 1].starts_with("  head.weight"));
        // Dead rows in creation order: embed before ln_f.
        assert!(f.details[dead.unwrap() + 1].starts_with("  embed.weight"));
        let traced = Measurement {
            traced: true,
            ..m.clone()
        };
        assert_eq!(judged(&traced).metrics["graph_cuts"], 0.0);
    }

    #[test]
    fn reads_the_drivers_rows() {
        let j = r#"{"loss_requires_grad":true,"params":[{"name":"w","shape":[2,2],"param_norm":1.0,"grad":{"kind":"norm","norm":"inf"},"depth":0,"order":0},{"name":"b","shape":[2],"param_norm":0.0,"grad":{"kind":"none"},"depth":null,"order":1}],"frozen":[],"buffers":[{"name":"bn.running_mean","shape":[2]}],"lora":null}"#;
        let m: Measurement = serde_json::from_str(j).unwrap();
        assert_eq!(
            m.params[0].grad,
            Grad::Norm {
                norm: f64::INFINITY
            }
        );
        assert_eq!(m.buffers[0].kind, "buffer: not trained");
    }
}
