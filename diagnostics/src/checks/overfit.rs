//! `overfit`: can the model memorise one small batch?
//!
//! A model and training loop that work can drive the loss on a single fixed batch of a dozen
//! examples close to zero within a couple of hundred optimizer steps. If they cannot, nothing
//! trained on the full data will be right either, and the way the loss fails says where to look:
//! - **rising** — the loss grows: the update goes the wrong way (the loss's sign) or the step is
//!   far too large;
//! - **numerics** — the loss becomes NaN or infinite: overflow, `log(0)`, `0/0`, a learning rate
//!   that blows up;
//! - **plateau** — the loss falls a little and stops: too little capacity, or a bug that caps it
//!   (softmax before the cross-entropy, frozen or detached parameters, targets that do not match);
//! - **slow** — not memorised, but still falling steadily at the end: more steps would get
//!   further (common for regression targets far from the init's outputs);
//! - **step too large** — the first AdamW step moves the weights by a large share of their own
//!   size (an effective learning rate far above the nominal one), and the loss bounces instead
//!   of falling (a warning when the batch is memorised anyway);
//! - **sign** — a cross-entropy that goes negative.
//!
//! On `zoo::mlp-softmax-ce` (softmax applied before the cross-entropy):
//! ```text
//! overfit  fail  plateau: the loss fell only from 1.393 to 0.744 (53% of start) in 200 steps;
//!                too little capacity, or a bug that caps it (softmax before the loss, frozen or
//!                detached parameters)
//! ```
//! Read: the loss curve (series "loss") flattens well above zero; the next command is grad-flow.
//!
//! Training uses AdamW without weight decay at `Options::learning_rate` for up to
//! `Options::steps` steps, stopping early once the batch is memorised.

use super::buffers;
use super::fresh::{restoring, Fresh};
use super::loss::masked_cross_entropy;
use super::optimizer::CheckOptimizer;
use super::read::{l2_norm, loss_value, scalar};
use crate::init::ParamStore;
use crate::model::{Batch, DebugModel, Task};
use crate::options::{Options, MAX_STEPS};
use crate::report::{CheckId, Finding};
use candle_core::{Result, Tensor, Var};
use mldebug_judge::overfit::{judge, Measurement};
pub use mldebug_judge::overfit::{
    Why, OVERFIT_ABS_PASS, OVERFIT_PASS_RATIO, OVERFIT_STALL_RATIO, OVERFIT_TAIL,
    OVERFIT_UPDATE_RATIO, OVERFIT_WARN_RATIO,
};

const ID: CheckId = CheckId::Overfit;

/// Runs on fresh parameters of `M` and its batch.
pub fn overfit<M: DebugModel>(opts: &Options) -> Result<Finding> {
    let fresh = Fresh::<M>::new(opts, opts.seed)?;
    run(&fresh.model, &fresh.params, &fresh.batch, opts)
}

/// Runs on the caller's model: trains on `batch` from the current weights, then puts every
/// parameter back as it was.
pub fn overfit_on<M: DebugModel>(
    model: &M,
    params: &ParamStore,
    batch: &Batch,
    opts: &Options,
) -> Result<Finding> {
    restoring(params, || run(model, params, batch, opts))
}

fn run<M: DebugModel>(
    model: &M,
    params: &ParamStore,
    batch: &Batch,
    opts: &Options,
) -> Result<Finding> {
    let classifies = M::task() != Task::Regression;
    // Buffers (BatchNorm's running statistics) are not trained: the optimizer never sees them
    // and the update ratio leaves them out.
    let split = buffers::split(model, params, batch)?;
    let vars = split.param_vars();
    let trainable = vars.iter().filter(|v| v.dtype().is_float()).count();
    if trainable == 0 {
        return Ok(judge(&Measurement::default(), &opts.ctx(M::task())));
    }
    let mut opt = CheckOptimizer::new(vars, opts.learning_rate)?;
    let total = opts.steps.max(1);
    // One loss per step; the capacity is only a hint, so a huge `steps` cannot ask for it all.
    let mut losses: Vec<f64> = Vec::with_capacity(total.min(MAX_STEPS).saturating_add(1));
    let mut start_ce = None;
    let mut end_ce = None;
    let weights: Vec<(String, Var)> = split
        .params
        .iter()
        .filter(|(_, v)| v.dtype().is_float() && v.rank() >= 2)
        .cloned()
        .collect();
    let before = weights
        .iter()
        .map(|(_, v)| v.as_detached_tensor().copy())
        .collect::<Result<Vec<_>>>()?;
    let mut updates = Vec::new();
    for step in 0..=total {
        opts.check_deadline()?;
        let output = model.forward(&batch.input, true)?;
        let loss = model.loss(&output, &batch.targets)?;
        let value = loss_value(&loss)?;
        losses.push(value);
        if classifies {
            let ce = scalar(&masked_cross_entropy(&output, &batch.targets)?).ok();
            if step == 0 {
                start_ce = ce;
            }
            end_ce = ce;
        }
        opts.report_progress(ID, step, total, Some(value));
        let first = losses[0];
        let memorised = value <= OVERFIT_PASS_RATIO * first
            || (classifies && (0.0..OVERFIT_ABS_PASS).contains(&value));
        if !value.is_finite() || step == total || (first > 0.0 && memorised) || first == 0.0 {
            break;
        }
        opt.backward_step(&loss)?;
        if step == 0 {
            updates = first_step_updates(&weights, &before)?;
        }
    }
    let m = Measurement {
        losses,
        updates,
        start_ce,
        end_ce,
        trainable,
        adapters_only: false,
    };
    Ok(judge(&m, &opts.ctx(M::task())))
}

/// `‖θ₁ − θ₀‖ / ‖θ₀‖` of every weight matrix over the first optimizer step, sorted ascending.
/// Adam's first step moves every element by about the learning rate, so this is the learning
/// rate measured against the weights' own scale.
fn first_step_updates(weights: &[(String, Var)], before: &[Tensor]) -> Result<Vec<(String, f64)>> {
    let mut out = Vec::with_capacity(weights.len());
    for ((name, var), old) in weights.iter().zip(before) {
        let norm = l2_norm(old)?;
        if norm > 0.0 {
            let moved = l2_norm(&(var.as_detached_tensor() - old)?)?;
            out.push((name.clone(), moved / norm));
        }
    }
    out.sort_by(|a, b| a.1.total_cmp(&b.1));
    Ok(out)
}
