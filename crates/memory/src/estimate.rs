//! The estimate: bytes per component and the peak of each stage of a training step.
//!
//! Stages are those of a steady-state step (the second and later, once the optimizer has its
//! state; PyTorch allocates AdamW's moments at the first `optimizer.step()`):
//! - **load**: the resident weights (with master copies and adapters);
//! - **forward**: + optimizer state + the activations kept for backward + the logits and loss;
//! - **backward**: the larger of its start (every activation, the logits and their gradients)
//!   and its end (one layer's activations and their gradients, every weight gradient);
//! - **optimizer step**: weights + gradients + state + the step's temporaries.
//!
//! The peak is the largest stage: what PyTorch reports as maximum *allocated* memory. Reserved
//! memory adds the caching allocator's slack ([`ALLOCATOR_SLACK`]); the device also holds the
//! CUDA context ([`CUDA_CONTEXT_BYTES`]), which PyTorch's counters do not show.

use crate::activations::{activation_bytes, checkpointed_per_layer, per_layer};
use crate::architecture::{ParamCounts, Shape};
use crate::describe;
use crate::optimizer::{self, state_bytes, step_temporaries};
use crate::setup::{Setup, Shard};
use crate::weights::{grad_bytes, trainable_params, weight_bytes, FP32};
use mldebug_text::number::human_bytes;
use serde::Serialize;

/// Reserved ÷ allocated − 1: the one measured anchor, TinyLlama QLoRA, reserved 7.09 GB for
/// 6.42 GB allocated (refs/memory.md), 10% more.
pub const ALLOCATOR_SLACK: f64 = 0.10;
/// The CUDA context and loaded kernels, outside PyTorch's counters: an assumed 0.5 GB (it varies
/// with the GPU, the CUDA version and the libraries loaded).
pub const CUDA_CONTEXT_BYTES: f64 = 0.5e9;

/// A stage of a training step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// The model loaded: weights (and master copies, adapters).
    Load,
    /// The forward pass: activations stored for backward, logits and loss.
    Forward,
    /// The backward pass: gradients and those in flight.
    Backward,
    /// The optimizer step: its states and temporaries.
    OptimizerStep,
}

impl Stage {
    /// The stages in the order a step runs them.
    pub const ALL: [Stage; 4] = [
        Stage::Load,
        Stage::Forward,
        Stage::Backward,
        Stage::OptimizerStep,
    ];

    /// The stage as the report names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Load => "load",
            Stage::Forward => "forward",
            Stage::Backward => "backward",
            Stage::OptimizerStep => "optimizer step",
        }
    }
}

/// One line of the estimate: what, how many bytes, and how it was counted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Component {
    /// Stable key for programs (`weights`, `gradients`, `activations`, ...).
    pub key: &'static str,
    /// What it is, as the table names it.
    pub name: String,
    /// Its bytes.
    pub bytes: f64,
    /// How it was counted (the formula or the assumption).
    pub how: String,
}

/// The peak of one stage and what is alive at it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StagePeak {
    /// The stage.
    pub stage: Stage,
    /// Bytes allocated at its peak.
    pub bytes: f64,
    /// What is alive then, in words.
    pub holds: String,
}

/// The whole estimate for one shape and setup.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    /// Parameter counts by part of the model.
    pub params: ParamCounts,
    /// Parameters the optimizer trains.
    pub trainable: u64,
    /// Bytes per component, one table line each.
    pub components: Vec<Component>,
    /// One layer's stored activations.
    pub layer_activations: f64,
    /// The peak of each stage.
    pub stages: Vec<StagePeak>,
    /// The largest stage: maximum allocated memory.
    pub peak: f64,
    /// With the allocator's slack: reserved memory.
    pub reserved: f64,
    /// With the CUDA context: what the GPU must hold.
    pub on_device: f64,
}

/// The quantities the stages are sums of, after sharding.
struct Parts {
    weights: f64,
    state: f64,
    grads: f64,
    /// Stored activations at the end of forward (with the final norm's).
    acts: f64,
    /// One layer's activations (recomputed, with checkpointing) and their gradients at the end
    /// of backward, over what checkpointing keeps.
    acts_backward_end: f64,
    /// The gradients of one layer's activations, in flight at the end of backward.
    layer_grads: f64,
    /// The logits as returned and the loss's fp32 log-softmax.
    logits_kept: f64,
    /// The fp32 copy of the logits the loss makes, alive only inside the loss.
    logits_upcast: f64,
    /// The fp32 gradients of the log-softmax and of the logits, at the start of backward.
    logits_grads: f64,
    step_temps: f64,
    accumulate: bool,
}

/// Estimates memory for `shape` trained with `setup`. The error is about the setup (LoRA
/// targets that name no layer of this model).
pub fn estimate(shape: &Shape, setup: &Setup) -> Result<Estimate, String> {
    let params = shape.params();
    let trainable = trainable_params(shape, setup)?;
    let lora = if setup.adapters() { trainable } else { 0 };
    let w = weight_bytes(shape, setup, lora);
    let value_bytes = activation_bytes(setup);
    let layer = per_layer(shape, setup.attention, setup.batch, setup.seq, value_bytes);
    let n = setup.gpus as f64;
    let (state_div, grad_div, weight_div) = match setup.shard {
        Shard::None => (1.0, 1.0, 1.0),
        Shard::Zero1 => (n, 1.0, 1.0),
        Shard::Zero2 => (n, n, 1.0),
        Shard::Zero3 | Shard::Fsdp => (n, n, n),
    };
    // ZeRO-3/FSDP gather one layer's weights at a time (and prefetch the next).
    let gathered = if weight_div > 1.0 {
        2.0 * w.total() / shape.layers as f64
    } else {
        0.0
    };
    let tokens = (setup.batch * setup.seq) as f64;
    let (acts_forward, acts_backward_end) = if setup.grad_checkpointing {
        let inputs = shape.layers as f64
            * checkpointed_per_layer(shape, setup.batch, setup.seq, value_bytes);
        // Forward runs one layer at a time; backward recomputes one at a time and adds the
        // gradients of its activations.
        (inputs + layer.total(), inputs + 2.0 * layer.total())
    } else {
        (shape.layers as f64 * layer.total(), 2.0 * layer.total())
    };
    let logits = logits_bytes(shape, setup);
    // The final norm's input and output (the head's input).
    let head_acts = 2.0 * tokens * shape.hidden as f64 * value_bytes;
    let parts = Parts {
        weights: w.total() / weight_div + gathered,
        state: state_bytes(shape, setup, trainable) / state_div,
        grads: trainable as f64 * grad_bytes(setup) / grad_div,
        acts: acts_forward + head_acts,
        acts_backward_end,
        layer_grads: layer.total(),
        logits_kept: logits.kept,
        logits_upcast: logits.upcast,
        logits_grads: logits.grads,
        step_temps: step_temporaries(shape, setup, trainable) / state_div,
        accumulate: setup.grad_accum > 1,
    };
    let (stages, backward_temps) = stages(&parts);
    let peak = stages.iter().map(|s| s.bytes).fold(0.0, f64::max);
    let counted = Counted {
        parts: &parts,
        weights: &w,
        layer: layer.total(),
        trainable,
        backward_temps,
        peak,
    };
    let components = components(shape, setup, &counted);
    Ok(Estimate {
        params,
        trainable,
        components,
        layer_activations: layer.total(),
        stages,
        peak,
        reserved: peak * (1.0 + ALLOCATOR_SLACK),
        on_device: peak * (1.0 + ALLOCATOR_SLACK) + CUDA_CONTEXT_BYTES,
    })
}

/// The logits-sized tensors, in bytes.
struct Logits {
    kept: f64,
    upcast: f64,
    grads: f64,
}

/// The logits come out in the activations' dtype; the loss upcasts them to fp32 (a copy that
/// lives only inside the loss) and keeps its fp32 log-softmax; backward starts with the fp32
/// gradients of both. Gemma 2's soft-capping keeps one more fp32 copy.
fn logits_bytes(shape: &Shape, setup: &Setup) -> Logits {
    if !shape.has_vocab_logits() {
        return Logits {
            kept: 0.0,
            upcast: 0.0,
            grads: 0.0,
        };
    }
    let values = (setup.batch * setup.seq * shape.vocab) as f64;
    let out = activation_bytes(setup);
    let softcap = if shape.logit_softcap { FP32 } else { 0.0 };
    Logits {
        kept: values * (out + softcap + FP32),
        upcast: if out < FP32 { values * FP32 } else { 0.0 },
        grads: values * 2.0 * FP32,
    }
}

/// The four stage peaks, and the in-flight part of the backward peak.
fn stages(p: &Parts) -> (Vec<StagePeak>, f64) {
    let accumulated = if p.accumulate { p.grads } else { 0.0 };
    let resident = p.weights + p.state + accumulated;
    let forward = resident + p.acts + p.logits_kept + p.logits_upcast;
    let start = resident + p.acts + p.logits_kept + p.logits_grads;
    let end = p.weights + p.state + p.grads + p.acts_backward_end;
    let (backward, temps, holds) = if start >= end {
        (
            start,
            p.logits_grads,
            "at its start: every activation, the logits and their gradients",
        )
    } else {
        (
            end,
            p.layer_grads,
            "at its end: every gradient, one layer's activations and theirs",
        )
    };
    let stage = |stage, bytes, holds: &str| StagePeak {
        stage,
        bytes,
        holds: holds.to_string(),
    };
    let stages = vec![
        stage(Stage::Load, p.weights, "weights"),
        stage(
            Stage::Forward,
            forward,
            "weights, optimizer state, activations, logits and loss",
        ),
        stage(Stage::Backward, backward, holds),
        stage(
            Stage::OptimizerStep,
            p.weights + p.grads + p.state + p.step_temps,
            "weights, gradients, optimizer state, the step's temporaries",
        ),
    ];
    (stages, temps)
}

/// Everything the component lines are made from.
struct Counted<'a> {
    parts: &'a Parts,
    weights: &'a crate::weights::WeightBytes,
    layer: f64,
    trainable: u64,
    backward_temps: f64,
    peak: f64,
}

fn components(shape: &Shape, setup: &Setup, c: &Counted) -> Vec<Component> {
    let p = c.parts;
    let mut out = Vec::new();
    let mut push = |key: &'static str, name: String, bytes: f64, how: String| {
        if bytes > 0.0 {
            out.push(Component {
                key,
                name,
                bytes,
                how,
            })
        }
    };
    describe::weights(shape, setup, c.weights, &mut push);
    push(
        "gradients",
        "gradients".into(),
        p.grads,
        format!(
            "{} trainable × {} bytes{}",
            mldebug_text::number::grouped(c.trainable),
            grad_bytes(setup),
            describe::sharded(setup, Shard::Zero2)
        ),
    );
    push(
        "optimizer",
        "optimizer state".into(),
        p.state,
        format!(
            "{}{}",
            optimizer::describe(setup),
            describe::sharded(setup, Shard::Zero1)
        ),
    );
    push(
        "activations",
        "activations".into(),
        p.acts,
        describe::activations(shape, setup, c.layer),
    );
    push(
        "logits",
        "logits and loss".into(),
        p.logits_kept + p.logits_upcast,
        describe::logits(shape, setup),
    );
    push(
        "temporaries.backward",
        "temporaries: backward".into(),
        c.backward_temps,
        "gradients in flight at the backward peak".into(),
    );
    push(
        "temporaries.step",
        "temporaries: optimizer step".into(),
        p.step_temps,
        "intermediates of the update (PyTorch's foreach implementation)".into(),
    );
    push(
        "overhead.allocator",
        "allocator slack (reserved − allocated)".into(),
        c.peak * ALLOCATOR_SLACK,
        format!(
            "{:.0}% of the peak, as in the measured anchor (refs/memory.md)",
            ALLOCATOR_SLACK * 100.0
        ),
    );
    push(
        "overhead.context",
        "CUDA context".into(),
        CUDA_CONTEXT_BYTES,
        format!(
            "assumed {}; outside PyTorch's counters",
            human_bytes(CUDA_CONTEXT_BYTES)
        ),
    );
    out
}
