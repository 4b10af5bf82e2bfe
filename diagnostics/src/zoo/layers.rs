//! Layer constructors shared by the zoo models.

use crate::nn::{self, Traced};
use candle_core::Result;
use candle_nn::{Init, Linear, VarBuilder};

/// Standard deviation of the output layer's weights. A last layer initialised small makes the
/// first predictions nearly uniform, so the loss at init is close to ln C, as Karpathy's recipe
/// asks of the final layer; 0.02 is GPT-2's init for every weight. With candle's Kaiming default
/// instead, the zoo's MLP starts 20–40% above ln 4, a warning.
pub const HEAD_INIT_STD: f64 = 0.02;

/// The output layer: traced, weights N(0, std²), bias zero.
pub fn head(
    in_dim: usize,
    out_dim: usize,
    bias: bool,
    std: f64,
    vb: VarBuilder,
) -> Result<Traced<Linear>> {
    let w = vb.get_with_hints(
        (out_dim, in_dim),
        "weight",
        Init::Randn {
            mean: 0.0,
            stdev: std,
        },
    )?;
    let b = if bias {
        Some(vb.get_with_hints(out_dim, "bias", Init::Const(0.0))?)
    } else {
        None
    };
    Ok(Traced::new(vb.prefix(), "linear", Linear::new(w, b)))
}

/// A traced linear layer whose weight and bias start at exactly zero.
pub fn zero_linear(in_dim: usize, out_dim: usize, vb: VarBuilder) -> Result<Traced<Linear>> {
    let w = vb.get_with_hints((out_dim, in_dim), "weight", Init::Const(0.0))?;
    let b = vb.get_with_hints(out_dim, "bias", Init::Const(0.0))?;
    Ok(Traced::new(vb.prefix(), "linear", Linear::new(w, Some(b))))
}

/// `nn::linear`, but the weight the forward uses is a detached copy: the `Var` is created (and
/// listed among the parameters) yet never receives a gradient.
pub fn detached_linear(in_dim: usize, out_dim: usize, vb: VarBuilder) -> Result<Traced<Linear>> {
    let l = nn::linear(in_dim, out_dim, vb.clone())?;
    let inner = Linear::new(l.inner().weight().detach(), l.inner().bias().cloned());
    Ok(Traced::new(vb.prefix(), "linear", inner))
}

/// `nn::linear_b` with the weight drawn `factor` times smaller than candle's default (Kaiming
/// normal, ReLU gain: std sqrt(2 / in_dim)). A bias keeps candle's default init.
pub fn scaled_down_linear(
    in_dim: usize,
    out_dim: usize,
    factor: f64,
    bias: bool,
    vb: VarBuilder,
) -> Result<Traced<Linear>> {
    let std = (2.0 / in_dim as f64).sqrt() / factor;
    let w = vb.get_with_hints(
        (out_dim, in_dim),
        "weight",
        Init::Randn {
            mean: 0.0,
            stdev: std,
        },
    )?;
    let b = if bias {
        let bound = 1.0 / (in_dim as f64).sqrt();
        Some(vb.get_with_hints(
            out_dim,
            "bias",
            Init::Uniform {
                lo: -bound,
                up: bound,
            },
        )?)
    } else {
        None
    };
    Ok(Traced::new(vb.prefix(), "linear", Linear::new(w, b)))
}
