//! `grad-flow`: does every parameter get a useful gradient from the loss?
//!
//! One forward and backward pass on fresh parameters, then per named parameter (sorted by name):
//! - **no grad** — the parameter is not in the loss's graph: unused, detached, or upstream of an
//!   op without a backward (candle's fused `rms_norm`, `layer_norm`, `softmax_last_dim`, `rope`;
//!   `RmsNorm::forward` and the default `LayerNorm` take them). Distinct from a zero gradient;
//! - **all-zero** — connected, but the gradient is exactly zero (dead units, zero init, a mask);
//! - **non-finite** — NaN or infinite values in the gradient;
//! - otherwise the gradient's L2 norm and its ratio to the parameter's norm.
//!
//! Then the first layer's gradient norm against the last hidden layer's (layers ordered by their
//! distance from the loss in the graph): tiny means vanishing, huge means exploding (AutoTrainer's rules).
//! When the model is built from the traced layers in [`crate::nn`], the module that cut the graph
//! is named.
//!
//! On `zoo::llama-candle` (candle-transformers' Llama, random weights):
//! ```text
//! grad-flow  fail  20 of 21 parameters get no gradient: model.embed_tokens.weight,
//!                  model.layers.0.input_layernorm.weight, model.layers.0.mlp.down_proj.weight,
//!                  model.layers.0.mlp.gate_proj.weight (+16 more) (unused, detached, or behind a
//!                  fused op without backward: rms_norm, layer_norm, softmax_last_dim, rope)
//! ```
//! Read: the parameters listed never learn; only `lm_head.weight` does. The details have one
//! row per parameter (no grad / all-zero / norm and grad/param); with traced layers the summary
//! also names the module that cut the graph (`the graph is cut at blocks.0.attn_norm, ...`).

use super::buffers::{self, Split};
use super::fresh::{restoring, Fresh};
use super::read::{l2_norm, stats};
use super::{next_for, show_command};
use crate::init::ParamStore;
use crate::model::{Batch, DebugModel};
use crate::options::Options;
use crate::report::{CheckId, Finding, Series, Status};
use crate::trace::Recorder;
use candle_core::{Result, TensorId};
use std::collections::HashMap;

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
#[derive(Debug, Clone, PartialEq)]
pub enum GradState {
    /// Not in the loss's graph.
    NoGrad,
    AllZero,
    NonFinite(usize),
    Norm(f64),
}

/// One parameter's row.
#[derive(Debug, Clone)]
pub struct ParamGrad {
    pub name: String,
    pub shape: Vec<usize>,
    pub param_norm: f64,
    pub grad: GradState,
    /// Position among the parameters in the loss's graph, 0 = closest to the loss.
    pub depth: Option<usize>,
}

impl ParamGrad {
    fn grad_norm(&self) -> Option<f64> {
        match self.grad {
            GradState::Norm(n) => Some(n),
            _ => None,
        }
    }
}

/// Runs on fresh parameters of `M` and its batch.
pub fn grad_flow<M: DebugModel>(opts: &Options) -> Result<Finding> {
    let fresh = Fresh::<M>::new(opts, opts.seed)?;
    run(&fresh.model, &fresh.params, &fresh.batch, opts)
}

/// Runs on the caller's model and its named parameters. Nothing is updated; the parameters are
/// restored anyway in case the model mutates state in `forward`.
pub fn grad_flow_on<M: DebugModel>(
    model: &M,
    params: &ParamStore,
    batch: &Batch,
    opts: &Options,
) -> Result<Finding> {
    restoring(params, || run(model, params, batch, opts))
}

fn run<M: DebugModel>(
    model: &M,
    store: &ParamStore,
    batch: &Batch,
    opts: &Options,
) -> Result<Finding> {
    // Buffers (BatchNorm's running statistics, declared frozen weights) get no gradient by
    // design: they are listed, not judged.
    let split = buffers::split(model, store, batch)?;
    let params = &split.params;
    opts.check_deadline()?;
    let recorder = Recorder::start();
    let output = model.forward(&batch.input, true)?;
    let loss = model.loss(&output, &batch.targets)?;
    let cuts = recorder.end_step()?.cuts;
    drop(recorder);
    opts.report_progress(ID, 1, 2, None);

    if !loss.track_op() {
        let mut f = Finding::new(
            ID,
            Status::Fail,
            format!(
                "the loss does not depend on any parameter ({} parameters): it is computed from detached or constant tensors",
                params.len()
            ),
        )
        .metric("params", params.len() as f64)
        .metric("params_without_grad", params.len() as f64)
        .next(show_command(ID));
        if !split.buffers.is_empty() {
            f = f.metric("buffers", split.buffers.len() as f64);
        }
        f.details = cut_lines(&cuts);
        f.details.extend(buffer_lines(&split));
        return Ok(f);
    }
    let depth: HashMap<TensorId, usize> = loss
        .sorted_nodes()
        .iter()
        .filter(|n| n.is_variable())
        .enumerate()
        .map(|(i, n)| (n.id(), i))
        .collect();
    let grads = loss.backward()?;
    let mut rows = Vec::with_capacity(params.len());
    for (name, var) in params {
        if !var.dtype().is_float() {
            continue;
        }
        let grad = match grads.get(var.as_tensor()) {
            None => GradState::NoGrad,
            Some(g) => {
                let [_, abs_max, non_finite] = stats(g)?;
                if non_finite > 0.0 {
                    GradState::NonFinite(non_finite as usize)
                } else if abs_max == 0.0 {
                    GradState::AllZero
                } else {
                    GradState::Norm(l2_norm(g)?)
                }
            }
        };
        rows.push(ParamGrad {
            name: name.clone(),
            shape: var.dims().to_vec(),
            param_norm: l2_norm(var.as_tensor())?,
            grad,
            depth: depth.get(&var.id()).copied(),
        });
    }
    opts.report_progress(ID, 2, 2, None);
    Ok(judge(&rows, &cuts, &split, opts))
}

/// One row per buffer, and one per declared buffer name that matches nothing.
fn buffer_lines(split: &Split) -> Vec<String> {
    let rows = split
        .buffers
        .iter()
        .map(|(name, var, kind)| format!("{name} {:?}: {}", var.dims(), kind.describe()));
    let unknown = split.unknown_declared.iter().map(|d| {
        format!("DebugModel::buffers names `{d}`, which matches no variable of the model")
    });
    rows.chain(unknown).collect()
}

/// "; 2 buffers not trained: bn.running_mean, bn.running_var" (nothing without buffers).
fn buffer_note(split: &Split) -> String {
    match split.buffers.len() {
        0 => String::new(),
        n => format!(
            "; {n} buffer{} not trained: {}",
            if n == 1 { "" } else { "s" },
            list(&split.buffer_names())
        ),
    }
}

/// The first (farthest from the loss) and the last hidden weight matrix with a usable gradient.
///
/// The output layer (the weight closest to the loss) is left out: its gradient is the loss's
/// gradient times the activations, not something backpropagated through other weights, and it
/// swings with the output layer's init scale (a small-init head makes every other layer's
/// gradient look tiny next to it: zoo `cnn` first/head = 2e-3 while first/last hidden = 0.4).
fn first_and_last(rows: &[ParamGrad]) -> Option<(&ParamGrad, &ParamGrad)> {
    let mut weights: Vec<&ParamGrad> = rows
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

fn cut_lines(cuts: &[String]) -> Vec<String> {
    cuts.iter()
        .map(|m| format!("gradient cut at module `{m}`: its input depends on parameters, its output does not"))
        .collect()
}

fn judge(rows: &[ParamGrad], cuts: &[String], split: &Split, opts: &Options) -> Finding {
    let names_where = |p: &dyn Fn(&GradState) -> bool| -> Vec<&str> {
        rows.iter()
            .filter(|r| p(&r.grad))
            .map(|r| r.name.as_str())
            .collect()
    };
    let no_grad = names_where(&|g| *g == GradState::NoGrad);
    let zero = names_where(&|g| *g == GradState::AllZero);
    let non_finite = names_where(&|g| matches!(g, GradState::NonFinite(_)));
    let total = rows.len();
    let layer_ratio = first_and_last(rows).map(|(first, last)| {
        let (a, b) = (
            first.grad_norm().unwrap_or(0.0),
            last.grad_norm().unwrap_or(0.0),
        );
        (first.name.as_str(), last.name.as_str(), a / b)
    });
    let cut_note = if cuts.is_empty() {
        String::new()
    } else {
        format!(
            "; the graph is cut at {}",
            list(&cuts.iter().map(String::as_str).collect::<Vec<_>>())
        )
    };
    let (status, summary) = if total == 0 {
        (
            Status::Fail,
            "the model has no trainable parameters: every parameter must come from the VarBuilder"
                .to_string(),
        )
    } else if !no_grad.is_empty() {
        let hint = if cuts.is_empty() {
            " (unused, detached, or behind a fused op without backward: rms_norm, layer_norm, softmax_last_dim, rope)"
        } else {
            ""
        };
        (
            Status::Fail,
            format!(
                "{} no gradient: {}{cut_note}{hint}",
                of_total(no_grad.len(), total, "gets", "get"),
                list(&no_grad)
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
    } else {
        ratio_verdict(layer_ratio, total)
    };
    let summary = format!("{summary}{}", buffer_note(split));
    let mut f = Finding::new(ID, status, summary)
        .metric("params", total as f64)
        .metric("params_without_grad", no_grad.len() as f64)
        .metric("params_zero_grad", zero.len() as f64)
        .metric("params_non_finite_grad", non_finite.len() as f64)
        .metric("graph_cuts", cuts.len() as f64)
        .next(next_for(ID, status, opts));
    // Only for a model that has buffers (the metric is absent, not 0, for the others).
    if !split.buffers.is_empty() {
        f = f.metric("buffers", split.buffers.len() as f64);
    }
    if let Some((_, _, r)) = layer_ratio {
        f = f.metric("first_last_ratio", r);
    }
    if let Some((first, _)) = first_and_last(rows) {
        f = f.metric("first_layer_grad_norm", first.grad_norm().unwrap_or(0.0));
    }
    let norms: Vec<f64> = rows.iter().filter_map(ParamGrad::grad_norm).collect();
    if !norms.is_empty() {
        f = f.metric(
            "grad_norm_total",
            norms.iter().map(|n| n * n).sum::<f64>().sqrt(),
        );
    }
    f.details = cut_lines(cuts);
    f.details.extend(rows.iter().map(row_line));
    f.details.extend(buffer_lines(split));
    f.series.push(profile(rows));
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

/// The gradient profile: one point per parameter, so the dead ones show too. A gradient that
/// is all zero, non-finite or absent is drawn at 0 (nothing to draw on a log axis) and its
/// label says which.
fn profile(rows: &[ParamGrad]) -> Series {
    let (points, labels) = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let (value, label) = match r.grad {
                GradState::Norm(n) => (n, r.name.clone()),
                GradState::AllZero => (0.0, format!("{} (all-zero gradient)", r.name)),
                GradState::NonFinite(_) => (0.0, format!("{} (non-finite gradient)", r.name)),
                GradState::NoGrad => (0.0, format!("{} (no gradient)", r.name)),
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

fn row_line(r: &ParamGrad) -> String {
    let state = match &r.grad {
        GradState::NoGrad => "no grad (not in the loss's graph)".to_string(),
        GradState::AllZero => "all-zero grad".to_string(),
        GradState::NonFinite(n) => format!("{n} non-finite grad values"),
        GradState::Norm(n) => {
            let ratio = if r.param_norm > 0.0 {
                n / r.param_norm
            } else {
                f64::INFINITY
            };
            format!("grad norm {n:.3e}, grad/param {ratio:.3e}")
        }
    };
    format!("{} {:?}: {state}", r.name, r.shape)
}
