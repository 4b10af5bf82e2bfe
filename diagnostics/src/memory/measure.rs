//! A measured training run on candle: fresh parameters, the model's batch (optionally repeated
//! or cut short), then [`STEPS`] steps of forward + loss, backward and an AdamW step, with the
//! peak read at each stage from the device's meter ([`super::meter`]: the counting allocator on
//! CPU, the memory pool on CUDA).
//!
//! The optimizer is created at step 1's optimizer stage, so its state appears where PyTorch
//! allocates AdamW's moments: at the first `optimizer.step()`. The gradients and the graph are
//! dropped at the end of each step, as `zero_grad(set_to_none=True)` and the end of `backward`
//! free them in PyTorch.
//!
//! Beside the measurement comes the estimate of each stage from the model itself: its
//! parameters, the batch, AdamW's two moments, and the bytes its autograd graph keeps
//! ([`super::graph`]): candle keeps every intermediate until backward is done.

use super::graph::{bytes, inventory, GraphInventory, TENSOR_OVERHEAD};
use super::layers::{traced_layers, Layers, FRAMES};
use super::meter::{self, Meter};
use super::{alloc, backward};
use crate::checks::buffers;
use crate::checks::fresh::in_dtype;
use crate::checks::optimizer::CheckOptimizer;
use crate::init::{seeded_var_builder, ParamStore};
use crate::model::{Batch, DebugModel, Task};
use crate::options::Options;
use crate::trace::Recorder;
use candle_core::{Device, Error, Result, Tensor, Var};
use mldebug_memory::measured::{
    Measurement, ModelEstimate, ModuleActivation, StageEstimate, StepMemory,
};

/// Training steps measured: enough to see step 2 against step 1 and growth over steps 2 to 4.
pub const STEPS: usize = 4;
/// Var-sized temporaries candle's AdamW holds at once while it updates one parameter: its 15
/// ops (new moments, their bias corrections, the square root, the update) all start from a
/// `Var`, so each result keeps its inputs until the parameter is set.
pub const ADAM_TEMPORARIES: f64 = 15.0;
/// Bytes of a parameter besides its data: its tensor's header, its name and its entry in the
/// parameter map (measured: 326 with names like `layer.12.weight`).
pub const VAR_OVERHEAD: f64 = 326.0;
/// In-flight tensors at backward's peak, in units of the graph's largest tensor: a node's
/// gradient, its inputs' gradients, the sums they are added to and the transposed copies
/// matmul's backward makes. Calibrated on the zoo, not derived.
pub const BACKWARD_IN_FLIGHT: f64 = 5.0;

/// How the model's own batch is resized for a measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchLayout {
    /// The batch repeated this many times along its first axis (1 = as is).
    pub copies: usize,
    /// For causal language models: the sequence cut to this many tokens (`None` = as is).
    pub seq: Option<usize>,
}

impl Default for BatchLayout {
    fn default() -> Self {
        BatchLayout {
            copies: 1,
            seq: None,
        }
    }
}

/// A measured run and the estimate beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// What the counting allocator saw.
    pub measurement: Measurement,
    /// The estimate of each stage, from the model itself.
    pub estimate: StageEstimate,
    /// The autograd graph of one step.
    pub graph: GraphInventory,
}

/// `batch` repeated and cut as `layout` says.
pub fn resize(batch: Batch, layout: BatchLayout, task: Task) -> Result<Batch> {
    let cut = |t: Tensor| -> Result<Tensor> {
        match layout.seq {
            Some(n) if task == Task::CausalLm && t.rank() >= 2 && n < t.dim(1)? => {
                t.narrow(1, 0, n)?.contiguous()
            }
            _ => Ok(t),
        }
    };
    let repeat = |t: Tensor| -> Result<Tensor> {
        if layout.copies <= 1 {
            return Ok(t);
        }
        Tensor::cat(&vec![&t; layout.copies], 0)
    };
    Ok(Batch {
        input: repeat(cut(batch.input)?)?,
        targets: repeat(cut(batch.targets)?)?,
    })
}

/// Measures [`STEPS`] training steps of fresh `M` on this thread, on `opts.device`. Needs a
/// meter for that device ([`meter::for_device`]: on CPU the counting allocator installed).
pub fn measure<M: DebugModel>(opts: &Options, layout: BatchLayout) -> Result<Run> {
    let meter = meter::for_device(&opts.device)?.map_err(|why| Error::Msg(why.into()))?;
    warm_up::<M>(opts, layout)?;
    let base = meter.live()?;
    let since = |x: i64| (x - base) as f64;
    let (params, vb) = seeded_var_builder(opts.seed, opts.dtype, &opts.device);
    let model = M::build(vb)?;
    let load = since(meter.live()?);
    let batch = batch_for::<M>(opts, layout, &opts.device)?;
    let data = since(meter.live()?) - load;
    let vars = buffers::split(&model, &params, &batch)?.param_vars();
    let mut optimizer: Option<CheckOptimizer> = None;
    let mut optimizer_state = 0.0;
    let mut steps = Vec::with_capacity(STEPS);
    for _ in 0..STEPS {
        opts.check_deadline()?;
        meter.reset_peak()?;
        let output = model.forward(&batch.input, true)?;
        let loss = model.loss(&output, &batch.targets)?;
        let forward = since(meter.peak()?);
        let forward_end = since(meter.live()?);
        let forward_largest = meter.largest() as f64;
        meter.reset_peak()?;
        let grads = loss.backward()?;
        let backward = since(meter.peak()?);
        drop((loss, output));
        let after_backward = since(meter.live()?);
        meter.reset_peak()?;
        if optimizer.is_none() {
            let before = meter.live()?;
            optimizer = Some(CheckOptimizer::new(vars.clone(), opts.learning_rate)?);
            optimizer_state = (meter.live()? - before) as f64;
        }
        if let Some(opt) = optimizer.as_mut() {
            opt.step(&grads)?;
        }
        drop(grads);
        steps.push(StepMemory {
            forward,
            forward_end,
            backward,
            after_backward,
            optimizer_step: since(meter.peak()?),
            end: since(meter.live()?),
            forward_largest,
        });
    }
    let mut source = meter.source().to_string();
    if !meter.counts_allocations() {
        if let Some(largest) = forward_largest_on_host::<M>(opts, layout)? {
            for s in &mut steps {
                s.forward_largest = largest;
            }
            source.push_str("; the largest forward allocation from the same forward pass on CPU");
        }
    }
    let (estimate, graph, modules) = estimate_from_one_step(
        &model,
        &params,
        &vars,
        &batch,
        opts.dtype.size_in_bytes(),
        &meter,
    )?;
    Ok(Run {
        measurement: Measurement {
            source,
            load,
            data,
            optimizer_state,
            steps,
            modules,
        },
        estimate,
        graph,
    })
}

/// The model's own batch for `opts`'s seed on `device`, in `opts`'s dtype, resized by `layout`.
fn batch_for<M: DebugModel>(opts: &Options, layout: BatchLayout, device: &Device) -> Result<Batch> {
    resize(
        in_dtype(M::batch(device, opts.seed)?, opts.dtype)?,
        layout,
        M::task(),
    )
}

/// Fresh `M` (parameters seeded by `opts`) and its batch, on `device`.
fn fresh<M: DebugModel>(
    opts: &Options,
    layout: BatchLayout,
    device: &Device,
) -> Result<(ParamStore, M, Batch)> {
    let (params, vb) = seeded_var_builder(opts.seed, opts.dtype, device);
    let model = M::build(vb)?;
    Ok((params, model, batch_for::<M>(opts, layout, device)?))
}

/// The largest single allocation of a forward pass and loss of fresh `M` (same seed, dtype
/// and batch) on CPU, from the counting allocator; `None` without it. A GPU pool counts the
/// bytes in use, not allocations, and the tensors a model's ops materialise are the same on
/// either device. The second of two passes is read: the first allocates the matmul kernels'
/// per-thread workspaces.
fn forward_largest_on_host<M: DebugModel>(
    opts: &Options,
    layout: BatchLayout,
) -> Result<Option<f64>> {
    if !alloc::installed() {
        return Ok(None);
    }
    let (_params, model, batch) = fresh::<M>(opts, layout, &Device::Cpu)?;
    let pass = || -> Result<f64> {
        alloc::reset_peak();
        let output = model.forward(&batch.input, true)?;
        let loss = model.loss(&output, &batch.targets)?;
        let largest = alloc::largest() as f64;
        drop((loss, output));
        Ok(largest)
    };
    pass()?;
    Ok(Some(pass()?))
}

/// The estimate of each stage for fresh `M` on its own batch (resized by `layout`), from its
/// autograd graph and the gradients one backward pass leaves: no training step, no counting
/// allocator needed.
pub fn estimate_only<M: DebugModel>(opts: &Options, layout: BatchLayout) -> Result<ModelEstimate> {
    let (params, model, batch) = fresh::<M>(opts, layout, &opts.device)?;
    let vars = buffers::split(&model, &params, &batch)?.param_vars();
    let (estimate, _, mut modules) = estimate_from_one_step(
        &model,
        &params,
        &vars,
        &batch,
        opts.dtype.size_in_bytes(),
        &Meter::Host,
    )?;
    let all = params.vars();
    let count = |vs: &[Var]| vs.iter().map(|v| v.elem_count() as u64).sum::<u64>();
    modules.sort_by(|a, b| b.bytes.total_cmp(&a.bytes));
    Ok(ModelEstimate {
        values: count(&all),
        trainable: count(&vars),
        value_bytes: opts.dtype.size_in_bytes(),
        batch: format!(
            "input {:?} → targets {:?}",
            batch.input.dims(),
            batch.targets.dims()
        ),
        estimate,
        modules,
    })
}

/// One forward and backward pass on a throwaway copy of the model, before the baseline: the
/// matmul kernels keep per-thread workspaces (allocated at their first use, then reused) that
/// belong to the process, not to the model — as the CUDA context and cuBLAS workspace do on a
/// GPU, which PyTorch users also leave out by measuring after a first step.
fn warm_up<M: DebugModel>(opts: &Options, layout: BatchLayout) -> Result<()> {
    let (_params, model, batch) = fresh::<M>(opts, layout, &opts.device)?;
    let output = model.forward(&batch.input, true)?;
    model.loss(&output, &batch.targets)?.backward()?;
    Ok(())
}

/// The estimate of each stage from one forward pass of `model` on `batch` with the recorder on
/// (its autograd graph and its traced layers, each module's output bytes) and the backward of
/// that pass (what the gradients keep, [`backward::probe`]).
fn estimate_from_one_step<M: DebugModel>(
    model: &M,
    params: &ParamStore,
    trainable: &[Var],
    batch: &Batch,
    size: usize,
    meter: &Meter,
) -> Result<(StageEstimate, GraphInventory, Vec<ModuleActivation>)> {
    let recorder = Recorder::with_capacity(FRAMES);
    let output = model.forward(&batch.input, true)?;
    recorder.end_step()?;
    let layers = traced_layers(recorder.frames(), size);
    drop(recorder);
    let loss = model.loss(&output, &batch.targets)?;
    let graph = inventory(&loss);
    let kept = backward::probe(loss, batch, &params.named(), &layers)?;
    let overhead = Overhead {
        tensor: meter.tensor_overhead(TENSOR_OVERHEAD),
        var: meter.tensor_overhead(VAR_OVERHEAD),
    };
    let estimate = stage_estimate(
        &params.vars(),
        trainable,
        batch,
        &graph,
        &layers,
        &kept,
        overhead,
    );
    Ok((estimate, graph, layers.modules))
}

/// Bytes the meter counts per tensor and per parameter besides their elements.
#[derive(Debug, Clone, Copy)]
struct Overhead {
    tensor: f64,
    var: f64,
}

/// The estimate of each stage of a steady-state step.
///
/// Forward: the weights, the batch, AdamW's moments and the autograd graph (candle keeps every
/// intermediate until backward is done). After backward, until the gradients are dropped: the
/// graph, the parameter gradients and what they keep ([`backward::probe`]). Backward's peak
/// adds the gradients in flight: five times the graph's largest tensor ([`BACKWARD_IN_FLIGHT`],
/// calibrated), the largest convolution's scratch ([`backward::conv_backward_scratch`]), and at
/// least the traced layers' output gradients, which backward holds on its way to the batch.
fn stage_estimate(
    all: &[Var],
    trainable: &[Var],
    batch: &Batch,
    graph: &GraphInventory,
    layers: &Layers,
    kept: &backward::Kept,
    overhead: Overhead,
) -> StageEstimate {
    let layer_outputs: f64 = layers.modules.iter().map(|m| m.bytes).sum();
    let weights: f64 = all
        .iter()
        .map(|v| bytes(v.as_tensor()) + overhead.var)
        .sum();
    // Each gradient, and each of AdamW's two moments, is a tensor of its parameter's size.
    let grads: f64 = trainable
        .iter()
        .map(|v| bytes(v.as_tensor()) + overhead.tensor)
        .sum();
    let largest = trainable
        .iter()
        .map(|v| bytes(v.as_tensor()))
        .fold(0.0, f64::max);
    let state = 2.0 * grads;
    let data = bytes(&batch.input) + bytes(&batch.targets) + 2.0 * overhead.tensor;
    let graph_bytes = graph.bytes as f64 + graph.nodes as f64 * overhead.tensor;
    let forward = weights + data + state + graph_bytes;
    StageEstimate {
        load: weights,
        forward,
        backward: forward
            + grads
            + kept.bytes.max(layer_outputs)
            + BACKWARD_IN_FLIGHT * graph.largest as f64
            + kept.conv_scratch,
        optimizer_step: forward
            + grads
            + kept.bytes
            + ADAM_TEMPORARIES * (largest + overhead.tensor),
    }
}
