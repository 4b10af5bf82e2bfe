//! What a transformer layer keeps for its backward pass, after Korthikanti et al. 2022,
//! "Reducing Activation Recomputation in Large Transformer Models", §4.1 (see refs/memory.md).
//!
//! Their count for one GPT layer in 16-bit with dropout is `s·b·h·(34 + 5·a·s/h)` bytes:
//! attention 11·sbh + 5·a·s²·b (the LayerNorm output that feeds q/k/v, q and k, v, the input of
//! the output projection, a dropout mask; the softmax output, its dropout mask and the dropped
//! probabilities), MLP 19·sbh (its input, the GeLU input and output at 4h, a dropout mask) and
//! the two LayerNorm inputs, 4·sbh. The same accounting is generalised here to
//! - grouped-query attention (k and v are `kv_heads·head_dim` wide, or repeated to every head
//!   where the eager path repeats them),
//! - gated MLPs (gate, up, the activation's output and the product are each `intermediate` wide),
//! - any value size (2 bytes in 16-bit, 4 in fp32; dropout masks stay 1 byte),
//! - dropout off (no masks, no dropped copies),
//! - and the attention kernel: eager attention stores the `heads × s²` probabilities, fused
//!   kernels (SDPA, FlashAttention) store only their output and a log-sum-exp per row.
//!
//! Tests: with a GPT-2 shape in 16-bit, eager attention and dropout on, [`per_layer`] equals
//! the paper's formula exactly.

use crate::architecture::{Mlp, Shape};
use crate::setup::{Attention, Quant, Setup};
use crate::weights::FP32;
use serde::Serialize;

/// Bytes of a dropout mask element (PyTorch keeps it as bool).
const MASK_BYTES: f64 = 1.0;

/// Bytes of an activation value: the compute dtype, or fp32 when a quantized base has had its
/// other parameters cast to fp32 (the hidden states then flow in fp32).
pub fn activation_bytes(setup: &Setup) -> f64 {
    if setup.quant != Quant::None && setup.kbit_upcast {
        FP32
    } else {
        setup.precision.compute_bytes()
    }
}
/// Bytes of the fp32 log-sum-exp a fused attention kernel keeps per head and row.
const LSE_BYTES: f64 = 4.0;

/// One layer's stored activations for a micro-batch, in bytes, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LayerActivations {
    /// The terms linear in the context length (the `34·sbh` part).
    pub linear: f64,
    /// The `heads × s²` terms: stored probabilities (eager), or the fused kernels' log-sum-exp.
    pub scores: f64,
}

impl LayerActivations {
    /// Every stored activation of one layer.
    pub fn total(&self) -> f64 {
        self.linear + self.scores
    }
}

/// Values kept per token by the attention half of a layer (its norm included), and the bytes of
/// its dropout masks per token.
fn attention_per_token(s: &Shape, attention: Attention) -> (f64, f64) {
    let h = s.hidden as f64;
    let q = s.q_width() as f64;
    // The eager path repeats k and v to every query head before the matmuls that keep them.
    let kv = if attention == Attention::Eager {
        q
    } else {
        s.kv_width() as f64
    };
    // Norm input, norm output (the projections' input), q, k, v, the output projection's input.
    let values = h + h + q + kv + kv + q;
    let masks = if s.hidden_dropout > 0.0 { h } else { 0.0 };
    (values, masks * MASK_BYTES)
}

/// Values kept per token by the MLP half (its norm included), and its mask bytes per token.
fn mlp_per_token(s: &Shape) -> (f64, f64) {
    let h = s.hidden as f64;
    let m = s.intermediate as f64;
    let values = match s.mlp {
        // Norm input, MLP input, activation input, activation output (the second linear's input).
        Mlp::Plain => h + h + m + m,
        // Norm input, MLP input, gate, up, activation(gate), activation(gate) × up.
        Mlp::Gated => h + h + 4.0 * m,
    };
    let masks = if s.hidden_dropout > 0.0 { h } else { 0.0 };
    (values, masks * MASK_BYTES)
}

/// Values kept per token by one layer with `attention`, without the scores.
pub fn values_per_token(s: &Shape, attention: Attention) -> f64 {
    attention_per_token(s, attention).0 + mlp_per_token(s).0
}

/// One layer's stored activations for `batch` sequences of `seq` tokens, values of
/// `value_bytes` bytes.
pub fn per_layer(
    s: &Shape,
    attention: Attention,
    batch: u64,
    seq: u64,
    value_bytes: f64,
) -> LayerActivations {
    let tokens = (batch * seq) as f64;
    let (attn_values, attn_masks) = attention_per_token(s, attention);
    let (mlp_values, mlp_masks) = mlp_per_token(s);
    let linear = tokens * ((attn_values + mlp_values) * value_bytes + attn_masks + mlp_masks);
    let rows = (s.heads * batch * seq) as f64;
    let scores = match attention {
        Attention::Eager => {
            let probs = rows * seq as f64;
            if s.attention_dropout > 0.0 {
                // The softmax output, the dropout mask, the dropped probabilities.
                probs * (2.0 * value_bytes + MASK_BYTES)
            } else {
                probs * value_bytes
            }
        }
        Attention::Sdpa | Attention::Flash => rows * LSE_BYTES,
    };
    LayerActivations { linear, scores }
}

/// What gradient checkpointing keeps of one layer: its input only.
pub fn checkpointed_per_layer(s: &Shape, batch: u64, seq: u64, value_bytes: f64) -> f64 {
    (batch * seq * s.hidden) as f64 * value_bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::architecture::{Mlp, Norm};

    fn gpt2_like() -> Shape {
        let mut s = Shape::llama_style(12, 768, 3072, 12, 12, 50257);
        s.mlp = Mlp::Plain;
        s.norm = Norm::Layer;
        s.attention_dropout = 0.1;
        s.hidden_dropout = 0.1;
        s
    }

    #[test]
    fn the_gpt_layer_in_16_bit_is_korthikantis_formula() {
        let s = gpt2_like();
        let (b, seq, h, a) = (4u64, 1024u64, 768u64, 12u64);
        let layer = per_layer(&s, Attention::Eager, b, seq, 2.0);
        let sbh = (seq * b * h) as f64;
        let paper = sbh * (34.0 + 5.0 * a as f64 * seq as f64 / h as f64);
        assert_eq!(layer.total(), paper);
        assert_eq!(layer.linear, 34.0 * sbh);
    }

    #[test]
    fn fused_attention_keeps_no_score_matrix() {
        let s = gpt2_like();
        let eager = per_layer(&s, Attention::Eager, 1, 2048, 2.0);
        let sdpa = per_layer(&s, Attention::Sdpa, 1, 2048, 2.0);
        assert_eq!(eager.linear, sdpa.linear);
        assert_eq!(sdpa.scores, (12 * 2048) as f64 * LSE_BYTES);
        assert!(eager.scores > 1000.0 * sdpa.scores);
    }

    #[test]
    fn gqa_keys_and_values_are_narrow_unless_eager_repeats_them() {
        let s = Shape::llama_style(22, 2048, 5632, 32, 4, 32000);
        assert_eq!(
            values_per_token(&s, Attention::Sdpa),
            (6 * 2048 + 2 * 256 + 4 * 5632) as f64
        );
        assert_eq!(
            values_per_token(&s, Attention::Eager),
            (8 * 2048 + 4 * 5632) as f64
        );
    }
}
