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
use crate::init::ParamStore;
use crate::model::{Batch, DebugModel};
use crate::options::Options;
use crate::report::{CheckId, Finding};
use crate::trace::Recorder;
use candle_core::{Result, TensorId};
use mldebug_judge::grad_flow::{judge, Measurement, Untrained};
pub use mldebug_judge::grad_flow::{
    Grad, ParamRow, GRAD_EXPLODE_RATIO, GRAD_VANISH_RATIO, GRAD_VANISH_WARN_RATIO, NAMES_IN_SUMMARY,
};
use std::collections::HashMap;

const ID: CheckId = CheckId::GradFlow;

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
    Ok(judge(
        &measure(model, store, batch, opts)?,
        &opts.ctx(M::task()),
    ))
}

/// The buffers (BatchNorm's running statistics, declared frozen weights) as report rows: they
/// get no gradient by design and are listed, not judged.
fn untrained(split: &Split) -> Vec<Untrained> {
    split
        .buffers
        .iter()
        .map(|(name, var, kind)| Untrained {
            name: name.clone(),
            shape: var.dims().to_vec(),
            kind: kind.describe().to_string(),
        })
        .collect()
}

/// The order the model created its parameters in (0 = first), by name.
///
/// candle draws every tensor id from one global counter as the tensor is created, and the
/// parameters are created while the model is built, so sorting by id recovers that order; the
/// id is opaque, so its number is read from its `Debug` form (`TensorId(42)`). A parameter whose
/// id cannot be read gets no order, and then no boundary is claimed.
fn creation_order(params: &[(String, candle_core::Var)]) -> HashMap<String, usize> {
    let mut ids: Vec<(usize, &str)> = params
        .iter()
        .filter_map(|(name, var)| {
            let text = format!("{:?}", var.id());
            let digits: String = text.chars().filter(char::is_ascii_digit).collect();
            Some((digits.parse().ok()?, name.as_str()))
        })
        .collect();
    ids.sort_unstable();
    ids.into_iter()
        .enumerate()
        .map(|(i, (_, name))| (name.to_string(), i))
        .collect()
}

fn measure<M: DebugModel>(
    model: &M,
    store: &ParamStore,
    batch: &Batch,
    opts: &Options,
) -> Result<Measurement> {
    let split = buffers::split(model, store, batch)?;
    opts.check_deadline()?;
    let recorder = Recorder::start();
    let output = model.forward(&batch.input, true)?;
    let loss = model.loss(&output, &batch.targets)?;
    let step = recorder.end_step()?;
    drop(recorder);
    let order = creation_order(&split.params);
    opts.report_progress(ID, 1, 2, None);
    let mut m = Measurement {
        loss_requires_grad: loss.track_op(),
        params: Vec::new(),
        frozen: Vec::new(),
        buffers: untrained(&split),
        unknown_declared: split.unknown_declared.clone(),
        cuts: step.cuts,
        traced: step.frames_recorded > 0,
        lora: None,
    };
    if !m.loss_requires_grad {
        m.params = split
            .params
            .iter()
            .map(|(name, var)| ParamRow {
                name: name.clone(),
                shape: var.dims().to_vec(),
                param_norm: 0.0,
                grad: Grad::None,
                depth: None,
                order: order.get(name).copied(),
            })
            .collect();
        return Ok(m);
    }
    let depth: HashMap<TensorId, usize> = loss
        .sorted_nodes()
        .iter()
        .filter(|n| n.is_variable())
        .enumerate()
        .map(|(i, n)| (n.id(), i))
        .collect();
    let grads = loss.backward()?;
    for (name, var) in &split.params {
        if !var.dtype().is_float() {
            continue;
        }
        let grad = match grads.get(var.as_tensor()) {
            None => Grad::None,
            Some(g) => {
                let [_, abs_max, non_finite] = stats(g)?;
                if non_finite > 0.0 {
                    Grad::NonFinite {
                        count: non_finite as usize,
                    }
                } else if abs_max == 0.0 {
                    Grad::Zero
                } else {
                    Grad::Norm { norm: l2_norm(g)? }
                }
            }
        };
        m.params.push(ParamRow {
            name: name.clone(),
            shape: var.dims().to_vec(),
            param_norm: l2_norm(var.as_tensor())?,
            grad,
            depth: depth.get(&var.id()).copied(),
            order: order.get(name).copied(),
        });
    }
    opts.report_progress(ID, 2, 2, None);
    Ok(m)
}
