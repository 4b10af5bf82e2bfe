//! What candle 0.11's backward leaves alive until the gradients are dropped, and the scratch a
//! convolution's backward needs: the parts of the backward and optimizer-step estimates that
//! depend on how candle computes gradients, found from one backward pass of the model (its
//! gradient store and graph, never the allocator).
//!
//! candle computes a gradient for every tensor an op used, the batch and the masks too, and
//! keeps it in the store although nothing reads it. Such a gradient that records an op is a sum
//! holding the zeros it started from and the partial gradient it added, and that partial holds
//! the gradient of the op's output: three times its own size plus, for the batch, the output of
//! the layer it went into first (the last tensor of the graph's order that is not a parameter's
//! view). A parameter used directly by an op whose other input records one (a convolution's
//! kernel after the first layer) keeps its layer's output gradient the same way; a parameter
//! used through a transpose or a broadcast (candle_nn's `Linear`, `Embedding`, `BatchNorm`) does
//! not, because backward detaches the gradient of that view.

use super::graph::{bytes, storage_key, TENSOR_OVERHEAD};
use super::layers::Layers;
use crate::model::Batch;
use candle_core::{Result, Tensor, Var};
use std::collections::HashSet;

/// What one backward pass shows.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Kept {
    /// Bytes the gradients keep alive besides themselves, until they are dropped.
    pub(crate) bytes: f64,
    /// Bytes of the largest convolution's backward scratch ([`conv_backward_scratch`]).
    pub(crate) conv_scratch: f64,
}

/// The backward of `loss` (the model's loss on `batch`): what the gradients keep and what the
/// convolutions need. A convolution's shapes come from its traced layer, or else from the graph
/// (the largest tensor with the batch's rows and the kernel's output, or input, channels).
pub(crate) fn probe(
    loss: Tensor,
    batch: &Batch,
    named: &[(String, Var)],
    layers: &Layers,
) -> Result<Kept> {
    let param_storages: HashSet<usize> = named
        .iter()
        .map(|(_, v)| storage_key(v.as_tensor()))
        .collect();
    let nodes: Vec<Tensor> = loss
        .sorted_nodes()
        .into_iter()
        .filter(|n| !n.is_variable() && !param_storages.contains(&storage_key(n)))
        .cloned()
        .collect();
    let first_layer = nodes.last().map_or(0.0, bytes);
    let mut shapes: Vec<&[usize]> = nodes.iter().map(|n| n.dims()).collect();
    shapes.push(batch.input.dims());
    let rows = batch.input.dims().first().copied().unwrap_or(0);
    let grads = loss.backward()?;

    let params: HashSet<_> = named.iter().map(|(_, v)| v.as_tensor().id()).collect();
    let mut kept = Kept::default();
    let mut batch_chain = false;
    for id in grads.get_ids().filter(|id| !params.contains(id)) {
        let Some(g) = grads.get_id(*id) else { continue };
        if g.track_op() {
            kept.bytes += 3.0 * (bytes(g) + TENSOR_OVERHEAD);
            batch_chain = true;
        } else {
            kept.bytes += bytes(g) + TENSOR_OVERHEAD;
        }
    }
    if batch_chain {
        kept.bytes += first_layer + TENSOR_OVERHEAD;
    }
    for (name, var) in named {
        let size = var.dtype().size_in_bytes();
        let layer = name.rsplit_once('.').map_or(name.as_str(), |(l, _)| l);
        let conv = (var.rank() == 4)
            .then(|| conv_shapes(layer, var.dims(), layers, &shapes, rows))
            .flatten();
        if let Some((input, out)) = &conv {
            let scratch = (conv_backward_scratch(input, out, var.dims()) * size) as f64;
            kept.conv_scratch = kept.conv_scratch.max(scratch);
        }
        if !grads.get(var.as_tensor()).is_some_and(|g| g.track_op()) {
            continue;
        }
        kept.bytes += match &conv {
            Some((_, out)) => (out.iter().product::<usize>() * size) as f64,
            None => layers
                .modules
                .iter()
                .find(|m| m.module == layer)
                .map_or(0.0, |m| m.bytes),
        };
    }
    Ok(kept)
}

/// The input and output shapes of the convolution whose kernel is `layer.weight` (`kernel`:
/// output channels, input channels, kh, kw): its traced frame, or else the largest of `shapes`
/// with `rows` rows and the kernel's input (output) channels.
fn conv_shapes(
    layer: &str,
    kernel: &[usize],
    layers: &Layers,
    shapes: &[&[usize]],
    rows: usize,
) -> Option<(Vec<usize>, Vec<usize>)> {
    if let Some((_, input, out)) = layers.convs.iter().find(|(m, _, _)| m == layer) {
        return Some((input.clone(), out.clone()));
    }
    let largest = |channels: usize| {
        shapes
            .iter()
            .filter(|s| s.len() == 4 && s[0] == rows && s[1] == channels)
            .max_by_key(|s| s.iter().product::<usize>())
            .map(|s| s.to_vec())
    };
    Some((largest(kernel[1])?, largest(kernel[0])?))
}

/// Elements candle 0.11's CPU backward of one `conv2d` layer holds beside its results while it
/// computes the kernel's gradient, which is itself a convolution (of the layer input by the
/// output gradient) run by the tiled im2col kernel: a contiguous copy of the layer input, a
/// contiguous copy of the output gradient, and one im2col tile of `kh·kw` rows (the kernel
/// gradient's positions) by `b·h_out·w_out` (the output's positions). Read from candle's
/// `cpu_backend/conv2d.rs`, not calibrated; 0 for shapes that are not 4-d.
pub fn conv_backward_scratch(input: &[usize], output: &[usize], kernel: &[usize]) -> usize {
    match (input, output, kernel) {
        ([_, _, _, _], [b, _, h, w], [_, _, kh, kw]) => {
            input.iter().product::<usize>() + output.iter().product::<usize>() + kh * kw * b * h * w
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conv_scratch_is_the_input_the_output_gradient_and_one_im2col_tile() {
        // 2 images, 3 → 4 channels, 5×5 kernel over 8×8, 'same': 384 + 512 + 25·2·64.
        let s = conv_backward_scratch(&[2, 3, 8, 8], &[2, 4, 8, 8], &[4, 3, 5, 5]);
        assert_eq!(s, 2 * 3 * 64 + 2 * 4 * 64 + 25 * 2 * 64);
        assert_eq!(conv_backward_scratch(&[2, 3], &[2, 4], &[4, 3]), 0);
    }

    #[test]
    fn an_untraced_convolution_is_found_by_its_channels() {
        let layers = Layers {
            modules: Vec::new(),
            convs: vec![("traced".into(), vec![2, 1, 8, 8], vec![2, 5, 8, 8])],
        };
        let shapes: [&[usize]; 4] = [&[2, 3, 8, 8], &[2, 4, 8, 8], &[2, 4, 4, 4], &[2, 7]];
        assert_eq!(
            conv_shapes("plain", &[4, 3, 3, 3], &layers, &shapes, 2),
            Some((vec![2, 3, 8, 8], vec![2, 4, 8, 8]))
        );
        assert_eq!(
            conv_shapes("traced", &[5, 1, 3, 3], &layers, &shapes, 2),
            Some((vec![2, 1, 8, 8], vec![2, 5, 8, 8]))
        );
        assert_eq!(
            conv_shapes("plain", &[9, 3, 3, 3], &layers, &shapes, 2),
            None
        );
    }
}
