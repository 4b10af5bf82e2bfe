//! Traced layers: candle's own layers, named from `vb.prefix()`, that report their outputs to the
//! frame recorder ([`crate::trace`]).
//!
//! The constructors take the same arguments as candle_nn's (`nn::linear(in, out, vb)`) and build
//! the same parameters with the same init, so swapping `candle_nn::linear` for `nn::linear` changes
//! nothing about training. Forward is candle's forward, fast paths included: [`rms_norm`] and
//! [`layer_norm`] run candle's fused kernels, which have no backward, exactly as
//! `candle_nn::RmsNorm` / `LayerNorm` do — the recorder then names them as gradient cuts. For
//! training, use the differentiable [`rms_norm_diff`] and [`layer_norm_diff`]. With no recorder
//! running, a traced forward costs one thread-local lookup more than candle's.
//!
//! [`traced`] wraps any [`Module`] (a closure too); [`traced_t`] any [`ModuleT`].

use crate::trace::recorder::record_arc;
use candle_core::{Module, ModuleT, Result, Tensor};
use candle_nn::{Conv2dConfig, LayerNormConfig, VarBuilder};
use std::sync::Arc;

/// A [`Module`] whose output goes to the frame recorder under `name`.
#[derive(Debug, Clone)]
pub struct Traced<M> {
    name: Arc<str>,
    kind: &'static str,
    inner: M,
}

impl<M> Traced<M> {
    /// Wrap `inner`, recording its outputs as `name` of kind `kind` (`linear`, `attention`, ...).
    pub fn new(name: impl Into<String>, kind: &'static str, inner: M) -> Traced<M> {
        Traced {
            name: name.into().into(),
            kind,
            inner,
        }
    }

    /// The name its outputs are recorded under.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The layer kind (`linear`, `conv2d`, ...).
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// The wrapped candle layer (its weights, its config).
    pub fn inner(&self) -> &M {
        &self.inner
    }
}

impl<M: Module> Module for Traced<M> {
    fn forward(&self, xs: &Tensor) -> Result<Tensor> {
        let ys = self.inner.forward(xs)?;
        record_arc(self.name.clone(), self.kind, Some(xs), &ys)?;
        Ok(ys)
    }
}

/// A [`ModuleT`] (dropout, batch norm) whose output goes to the frame recorder under `name`.
///
/// A separate type because candle implements `ModuleT` for every `Module`, so one wrapper cannot
/// implement both.
#[derive(Debug, Clone)]
pub struct TracedT<M> {
    name: Arc<str>,
    kind: &'static str,
    inner: M,
}

impl<M> TracedT<M> {
    /// Wraps `inner`, recording its outputs under `name` as a `kind` layer.
    pub fn new(name: impl Into<String>, kind: &'static str, inner: M) -> TracedT<M> {
        TracedT {
            name: name.into().into(),
            kind,
            inner,
        }
    }

    /// The name its outputs are recorded under.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The wrapped candle layer.
    pub fn inner(&self) -> &M {
        &self.inner
    }
}

impl<M: ModuleT> ModuleT for TracedT<M> {
    fn forward_t(&self, xs: &Tensor, train: bool) -> Result<Tensor> {
        let ys = self.inner.forward_t(xs, train)?;
        record_arc(self.name.clone(), self.kind, Some(xs), &ys)?;
        Ok(ys)
    }
}

/// Trace any module (a closure `|x: &Tensor| ...` too) under `name`, kind `module`.
pub fn traced<M: Module>(name: impl Into<String>, module: M) -> Traced<M> {
    Traced::new(name, "module", module)
}

/// Trace any train/eval module under `name`, kind `module`.
pub fn traced_t<M: ModuleT>(name: impl Into<String>, module: M) -> TracedT<M> {
    TracedT::new(name, "module", module)
}

/// The frame name for a layer built under `vb`: its prefix, or the layer kind at the root.
fn frame_name(vb: &VarBuilder, kind: &str) -> String {
    let p = vb.prefix();
    if p.is_empty() {
        kind.to_string()
    } else {
        p
    }
}

/// `candle_nn::linear`, traced.
pub fn linear(in_dim: usize, out_dim: usize, vb: VarBuilder) -> Result<Traced<candle_nn::Linear>> {
    let name = frame_name(&vb, "linear");
    Ok(Traced::new(
        name,
        "linear",
        candle_nn::linear(in_dim, out_dim, vb)?,
    ))
}

/// `candle_nn::linear_no_bias`, traced.
pub fn linear_no_bias(
    in_dim: usize,
    out_dim: usize,
    vb: VarBuilder,
) -> Result<Traced<candle_nn::Linear>> {
    let name = frame_name(&vb, "linear");
    let inner = candle_nn::linear_no_bias(in_dim, out_dim, vb)?;
    Ok(Traced::new(name, "linear", inner))
}

/// `candle_nn::linear_b`, traced.
pub fn linear_b(
    in_dim: usize,
    out_dim: usize,
    bias: bool,
    vb: VarBuilder,
) -> Result<Traced<candle_nn::Linear>> {
    let name = frame_name(&vb, "linear");
    let inner = candle_nn::linear_b(in_dim, out_dim, bias, vb)?;
    Ok(Traced::new(name, "linear", inner))
}

/// `candle_nn::embedding`, traced.
pub fn embedding(
    in_size: usize,
    out_size: usize,
    vb: VarBuilder,
) -> Result<Traced<candle_nn::Embedding>> {
    let name = frame_name(&vb, "embedding");
    let inner = candle_nn::embedding(in_size, out_size, vb)?;
    Ok(Traced::new(name, "embedding", inner))
}

/// `candle_nn::conv2d`, traced.
pub fn conv2d(
    in_channels: usize,
    out_channels: usize,
    kernel_size: usize,
    cfg: Conv2dConfig,
    vb: VarBuilder,
) -> Result<Traced<candle_nn::Conv2d>> {
    let name = frame_name(&vb, "conv2d");
    let inner = candle_nn::conv2d(in_channels, out_channels, kernel_size, cfg, vb)?;
    Ok(Traced::new(name, "conv2d", inner))
}

/// `candle_nn::batch_norm`, traced (a train/eval module: call `forward_t(x, train)`). Its
/// running mean and variance live in the `VarBuilder` too; they are buffers, not parameters
/// (the checks tell them apart: see [`crate::checks::buffers`]).
pub fn batch_norm<C: Into<candle_nn::BatchNormConfig>>(
    num_features: usize,
    config: C,
    vb: VarBuilder,
) -> Result<TracedT<candle_nn::BatchNorm>> {
    let name = frame_name(&vb, "batch-norm");
    let inner = candle_nn::batch_norm(num_features, config, vb)?;
    Ok(TracedT::new(name, "batch-norm", inner))
}

/// `candle_nn::layer_norm`, traced. **Cuts gradients** on contiguous input when the mean is
/// removed and there is a bias (the default): candle then runs its fused kernel, which has no
/// backward. Use [`layer_norm_diff`] in a training path.
pub fn layer_norm<C: Into<LayerNormConfig>>(
    size: usize,
    config: C,
    vb: VarBuilder,
) -> Result<Traced<candle_nn::LayerNorm>> {
    let name = frame_name(&vb, "layer-norm");
    let inner = candle_nn::layer_norm(size, config, vb)?;
    Ok(Traced::new(name, "layer-norm", inner))
}

/// `candle_nn::rms_norm`, traced. **Cuts gradients** on contiguous input (candle's fused kernel
/// has no backward). Use [`rms_norm_diff`] in a training path.
pub fn rms_norm(size: usize, eps: f64, vb: VarBuilder) -> Result<Traced<candle_nn::RmsNorm>> {
    let name = frame_name(&vb, "rms-norm");
    Ok(Traced::new(
        name,
        "rms-norm",
        candle_nn::rms_norm(size, eps, vb)?,
    ))
}

/// RmsNorm through candle's differentiable path (`RmsNorm::forward_diff`).
#[derive(Debug, Clone)]
pub struct RmsNormDiff(pub candle_nn::RmsNorm);

impl Module for RmsNormDiff {
    fn forward(&self, xs: &Tensor) -> Result<Tensor> {
        self.0.forward_diff(xs)
    }
}

/// LayerNorm through candle's differentiable path (`ops::layer_norm_slow` where the default
/// forward would take the fused kernel).
#[derive(Debug, Clone)]
pub struct LayerNormDiff(pub candle_nn::LayerNorm);

impl Module for LayerNormDiff {
    fn forward(&self, xs: &Tensor) -> Result<Tensor> {
        let ln = &self.0;
        match ln.bias() {
            Some(bias) if ln.remove_mean() => {
                candle_nn::ops::layer_norm_slow(xs, ln.weight(), bias, ln.eps() as f32)
            }
            // candle's own forward only takes the fused kernel with a bias and mean removal.
            _ => ln.forward(xs),
        }
    }
}

/// Same parameters as [`rms_norm`], differentiable forward: gradients reach everything before it.
pub fn rms_norm_diff(size: usize, eps: f64, vb: VarBuilder) -> Result<Traced<RmsNormDiff>> {
    let name = frame_name(&vb, "rms-norm");
    let inner = RmsNormDiff(candle_nn::rms_norm(size, eps, vb)?);
    Ok(Traced::new(name, "rms-norm", inner))
}

/// Same parameters as [`layer_norm`], differentiable forward.
pub fn layer_norm_diff<C: Into<LayerNormConfig>>(
    size: usize,
    config: C,
    vb: VarBuilder,
) -> Result<Traced<LayerNormDiff>> {
    let name = frame_name(&vb, "layer-norm");
    let inner = LayerNormDiff(candle_nn::layer_norm(size, config, vb)?);
    Ok(Traced::new(name, "layer-norm", inner))
}
