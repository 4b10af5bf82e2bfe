//! What candle's autograd graph keeps alive: the bytes of every distinct storage among the
//! tensors that lead from a loss back to the parameters.
//!
//! candle keeps every intermediate of a forward pass while the loss (or anything computed from
//! it) is alive: each op holds its inputs. So after a forward pass the graph *is* the
//! activations, and its size is the estimate `check memory` sets beside the measured forward.
//! Views (reshape, transpose, narrow, broadcast) share their source's storage and are counted
//! once. Tensors that lead to no parameter (masks, integer targets) are not among the nodes and
//! not counted.

use candle_core::Tensor;
use std::collections::HashMap;

/// Bytes of a tensor besides its data in candle 0.11 on a 64-bit target: the shared tensor
/// struct, its shape and strides, its storage's lock (measured with the counting allocator:
/// 256 for a rank-1 tensor).
pub const TENSOR_OVERHEAD: f64 = 256.0;

/// Bytes of a tensor's elements.
pub(crate) fn bytes(t: &Tensor) -> f64 {
    (t.elem_count() * t.dtype().size_in_bytes()) as f64
}

/// The graph behind a loss, by storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GraphInventory {
    /// Bytes of the distinct storages of the non-parameter nodes.
    pub bytes: u64,
    /// How many distinct storages.
    pub storages: usize,
    /// How many tensors (views included), each with its own small header.
    pub nodes: usize,
    /// The largest of them.
    pub largest: u64,
}

/// The storage a tensor's data lives in, as an address: equal for a tensor and its views.
pub(crate) fn storage_key(t: &Tensor) -> usize {
    let (storage, _) = t.storage_and_layout();
    address(&*storage)
}

fn address<T: ?Sized>(r: &T) -> usize {
    (r as *const T).cast::<()>() as usize
}

/// Elements of the storage this tensor's layout reaches (a lower bound for a view, exact for a
/// contiguous tensor at offset 0; the largest over a storage's tensors is kept).
fn reach(t: &Tensor) -> u64 {
    let layout = t.layout();
    if t.elem_count() == 0 {
        return 0;
    }
    let span: usize = layout
        .dims()
        .iter()
        .zip(layout.stride())
        .map(|(d, s)| (d - 1) * s)
        .sum();
    (layout.start_offset() + span + 1) as u64
}

/// The non-parameter storages of the graph that computes `loss`.
pub fn inventory(loss: &Tensor) -> GraphInventory {
    let mut storages: HashMap<usize, u64> = HashMap::new();
    let mut nodes = 0;
    for node in loss.sorted_nodes() {
        if node.is_variable() {
            continue;
        }
        nodes += 1;
        let bytes = reach(node) * node.dtype().size_in_bytes() as u64;
        let entry = storages.entry(storage_key(node)).or_default();
        *entry = (*entry).max(bytes);
    }
    GraphInventory {
        bytes: storages.values().sum(),
        storages: storages.len(),
        nodes,
        largest: storages.values().copied().max().unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{DType, Device, Var};

    #[test]
    fn views_are_counted_once_and_parameters_not_at_all() -> candle_core::Result<()> {
        let w = Var::ones((4, 8), DType::F32, &Device::Cpu)?;
        let x = Tensor::ones((2, 4), DType::F32, &Device::Cpu)?;
        let h = x.matmul(w.as_tensor())?; // [2, 8]: 64 bytes
        let t = h.t()?; // a view of h
        let loss = t.sum_all()?; // a [1, 1] sum (4 bytes) reshaped to a scalar view of it
        let inv = inventory(&loss);
        assert_eq!(inv.bytes, 64 + 4);
        assert_eq!(inv.storages, 2);
        // matmul, transpose, sum, reshape: four tensors over two storages.
        assert_eq!(inv.nodes, 4);
        assert_eq!(inv.largest, 64);
        Ok(())
    }
}
