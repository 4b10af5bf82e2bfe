//! Which of a model's variables are trained parameters and which are buffers.
//!
//! candle keeps everything a layer asks its `VarBuilder` for in one store: weights, and also
//! state that is not trained, such as `BatchNorm`'s running mean and variance, which the forward
//! pass overwrites (`Var::set`) in training mode and reads in evaluation mode. A buffer gets no
//! gradient by design, so counting it as a parameter makes grad-flow cry "no gradient" on a
//! sound model, and handing it to an optimizer is wrong.
//!
//! The rule, applied to every floating-point variable:
//! 1. **written by the forward**: one training-mode forward pass and the loss, on the batch; a
//!    variable whose value that pass changed, and that the loss's graph does not reach, is a
//!    buffer. The values before the pass are put back afterwards. This finds candle's
//!    `BatchNorm` statistics (1-D and 2-D, with or without the affine weight and bias) and any
//!    state a model updates the same way, whatever it is called;
//! 2. **declared**: a variable the model names in [`DebugModel::buffers`] (a frozen embedding, a
//!    statistic the training pass never writes) is a buffer whatever it does;
//! 3. **integer**: a variable of an integer dtype has nothing to differentiate.
//!
//! Everything else is a parameter, including a variable the forward never touches and the loss
//! never reaches: that is an unused or detached weight, a real finding (grad-flow fails it).
//! A variable that the loss does reach is a parameter even when the forward also writes it.

use super::read::host_f32;
use crate::init::ParamStore;
use crate::model::{Batch, DebugModel};
use candle_core::{DType, Result, Tensor, TensorId, Var};
use std::collections::HashSet;

/// Why a variable is a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferKind {
    /// The training-mode forward overwrote it and the loss does not depend on it.
    Written,
    /// The model lists it in [`DebugModel::buffers`].
    Declared,
    /// Integer values (a step counter, token ids kept as a variable): nothing to differentiate.
    Integer,
}

impl BufferKind {
    /// How a report row says it.
    pub fn describe(self) -> &'static str {
        match self {
            BufferKind::Written => "buffer: written by the forward pass, not trained",
            BufferKind::Declared => {
                "buffer: declared by the model (DebugModel::buffers), not trained"
            }
            BufferKind::Integer => "buffer: integer values, cannot be trained",
        }
    }
}

/// A model's variables, sorted by name within each list.
#[derive(Debug, Clone, Default)]
pub struct Split {
    /// The trained parameters (what an optimizer steps and grad-flow judges).
    pub params: Vec<(String, Var)>,
    /// The buffers and why each is one.
    pub buffers: Vec<(String, Var, BufferKind)>,
    /// Names in [`DebugModel::buffers`] that match no variable (a typo, or a renamed layer).
    pub unknown_declared: Vec<String>,
}

impl Split {
    /// The parameters' `Var`s (what an optimizer takes).
    pub fn param_vars(&self) -> Vec<Var> {
        self.params.iter().map(|(_, v)| v.clone()).collect()
    }

    /// The buffers' names.
    pub fn buffer_names(&self) -> Vec<&str> {
        self.buffers.iter().map(|(n, _, _)| n.as_str()).collect()
    }
}

/// Whether `name` is covered by one of the declared names: equal to it, or under a declared
/// prefix ending in `.`.
pub fn declared(name: &str, declared: &[String]) -> bool {
    declared
        .iter()
        .any(|d| d == name || (d.ends_with('.') && name.starts_with(d.as_str())))
}

/// Split `store`'s variables into parameters and buffers (see the module docs). Runs one
/// training-mode forward pass and the loss on `batch`; every variable is put back as it was.
pub fn split<M: DebugModel>(model: &M, store: &ParamStore, batch: &Batch) -> Result<Split> {
    let named = store.named();
    let declared_names = M::buffers();
    let saved = store.snapshot()?;
    let probe = written_outside_graph(model, &named, batch, &saved);
    store.restore(&saved)?;
    let written = probe?;
    let mut out = Split::default();
    for (name, var) in named {
        if declared(&name, &declared_names) {
            out.buffers.push((name, var, BufferKind::Declared));
        } else if !var.dtype().is_float() {
            out.buffers.push((name, var, BufferKind::Integer));
        } else if written.contains(&var.id()) {
            out.buffers.push((name, var, BufferKind::Written));
        } else {
            out.params.push((name, var));
        }
    }
    out.unknown_declared = declared_names
        .into_iter()
        .filter(|d| {
            !out.buffers
                .iter()
                .any(|(n, _, k)| *k == BufferKind::Declared && declared(n, std::slice::from_ref(d)))
        })
        .collect();
    Ok(out)
}

/// The float variables that one training forward + loss changed and the loss does not reach.
fn written_outside_graph<M: DebugModel>(
    model: &M,
    named: &[(String, Var)],
    batch: &Batch,
    saved: &crate::init::Snapshot,
) -> Result<HashSet<TensorId>> {
    let output = model.forward(&batch.input, true)?;
    let loss = model.loss(&output, &batch.targets)?;
    let in_graph: HashSet<TensorId> = if loss.track_op() {
        loss.sorted_nodes()
            .iter()
            .filter(|n| n.is_variable())
            .map(|n| n.id())
            .collect()
    } else {
        HashSet::new()
    };
    let mut written = HashSet::new();
    for (name, var) in named {
        if !var.dtype().is_float() || in_graph.contains(&var.id()) {
            continue;
        }
        if let Some(before) = saved.value(name) {
            if changed(var.as_tensor(), before)? {
                written.insert(var.id());
            }
        }
    }
    Ok(written)
}

/// Whether any element of `now` differs from `before` (bit for bit, so an untouched NaN is
/// unchanged). Compared on the device first; only a variable that differs there is read back.
fn changed(now: &Tensor, before: &Tensor) -> Result<bool> {
    let now = now.detach();
    let differs = now.ne(before)?.to_dtype(DType::F32)?.max_all()?;
    if host_f32(&differs)?[0] == 0.0 {
        return Ok(false);
    }
    let (a, b) = (host_f32(&now)?, host_f32(before)?);
    Ok(a.iter().zip(&b).any(|(x, y)| x.to_bits() != y.to_bits()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_names_match_exactly_or_by_dotted_prefix() {
        let d = vec!["embed.weight".to_string(), "frozen.".to_string()];
        assert!(declared("embed.weight", &d));
        assert!(!declared("embed.weight2", &d));
        assert!(declared("frozen.a.weight", &d));
        assert!(!declared("frozenx.weight", &d));
        assert!(!declared("bn.running_mean", &[]));
    }
}
