//! Optimizer state and the temporaries of one optimizer step, per trainable parameter.
//!
//! AdamW keeps two moments per trainable value (8 bytes in fp32); bitsandbytes' 8-bit AdamW
//! keeps them in one byte each plus an fp32 constant per block of 256; SGD keeps nothing, SGD
//! with momentum one buffer; Adafactor factors the second moment of a matrix into its row and
//! column sums and keeps no first moment (its defaults in transformers).

use crate::architecture::Shape;
use crate::setup::{Optimizer, Setup};
use crate::weights::{full_param_bytes, targeted, FP32};

/// bitsandbytes' 8-bit optimizers quantize their state in blocks of 256 values, one fp32 absmax
/// each.
pub const ADAM8_BLOCK: f64 = 256.0;

/// Bytes of one moment value: fp32 for adapters and for mixed or fp32 training; the weights'
/// 16-bit dtype when the whole model trains in bf16 or fp16 (PyTorch keeps state in the
/// parameter's dtype).
fn moment_bytes(setup: &Setup) -> f64 {
    if setup.adapters() || setup.precision.is_mixed() {
        FP32
    } else {
        full_param_bytes(setup.precision)
    }
}

/// Optimizer state for `trainable` parameters (before any sharding).
pub fn state_bytes(shape: &Shape, setup: &Setup, trainable: u64) -> f64 {
    let n = trainable as f64;
    match setup.optimizer {
        Optimizer::AdamW | Optimizer::PagedAdamW => 2.0 * moment_bytes(setup) * n,
        Optimizer::AdamW8bit => 2.0 * (1.0 + FP32 / ADAM8_BLOCK) * n,
        Optimizer::Sgd => 0.0,
        Optimizer::SgdMomentum => moment_bytes(setup) * n,
        Optimizer::Adafactor => adafactor_values(shape, setup) as f64 * FP32,
    }
}

/// Values Adafactor keeps: rows + columns per trainable matrix, every value of a vector.
fn adafactor_values(shape: &Shape, setup: &Setup) -> u64 {
    if setup.adapters() {
        // A is r × d_in, B is d_out × r.
        let r = setup.lora_rank;
        let per_layer: u64 = targeted(shape, &setup.lora_targets)
            .unwrap_or_default()
            .iter()
            .map(|l| (r + l.d_in) + (l.d_out + r))
            .sum();
        return shape.layers * per_layer;
    }
    let p = shape.params();
    let (h, v) = (shape.hidden, shape.vocab);
    let matrices: u64 = shape.linears().iter().map(|l| l.d_in + l.d_out).sum();
    let mut values = shape.layers * matrices + p.norms + p.biases;
    // Embedding tables (token, position, token type), each factored.
    values += v + h;
    if shape.positions > 0 {
        values += shape.positions + h;
    }
    if shape.token_types > 0 {
        values += shape.token_types + h;
    }
    if p.head > 0 {
        // An untied head is one more matrix; BERT's heads are approximated the same way.
        values += v + h;
    }
    values
}

/// Temporaries of one optimizer step: PyTorch's default (foreach) AdamW and SGD-momentum hold
/// about one state-sized list of intermediates; bitsandbytes' kernels are fused; Adafactor
/// works one tensor at a time (two update-sized buffers of the largest).
pub fn step_temporaries(shape: &Shape, setup: &Setup, trainable: u64) -> f64 {
    match setup.optimizer {
        Optimizer::AdamW | Optimizer::SgdMomentum => moment_bytes(setup) * trainable as f64,
        Optimizer::AdamW8bit | Optimizer::PagedAdamW | Optimizer::Sgd => 0.0,
        Optimizer::Adafactor => {
            let largest = if setup.adapters() {
                trainable / shape.layers.max(1)
            } else {
                shape.params().largest_matrix
            };
            2.0 * FP32 * largest as f64
        }
    }
}

/// How the state is described in the output.
pub fn describe(setup: &Setup) -> String {
    match setup.optimizer {
        Optimizer::AdamW => format!("AdamW: 2 moments × {} bytes", moment_bytes(setup)),
        Optimizer::PagedAdamW => format!(
            "paged AdamW: 2 moments × {} bytes (pages can move to CPU memory under pressure)",
            moment_bytes(setup)
        ),
        Optimizer::AdamW8bit => "8-bit AdamW: 2 moments × 1 byte + an fp32 constant per 256".into(),
        Optimizer::Sgd => "SGD keeps no state".into(),
        Optimizer::SgdMomentum => format!("SGD momentum: 1 buffer × {} bytes", moment_bytes(setup)),
        Optimizer::Adafactor => "Adafactor: factored second moment (rows + columns) in fp32".into(),
    }
}
