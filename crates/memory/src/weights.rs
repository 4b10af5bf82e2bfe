//! Model state per parameter: the bytes of weights in each storage (16/32-bit, 8-bit and 4-bit
//! quantized with their constants), the trainable set (every parameter, or LoRA adapters with
//! `r·(d_in + d_out)` parameters per targeted matrix), and their gradients.

use crate::architecture::{Linear, Shape};
use crate::setup::{Method, Precision, Quant, Setup, Targets};
use serde::Serialize;

/// 4-bit NormalFloat codes: half a byte a weight.
pub const NF4_CODE_BYTES: f64 = 0.5;
/// bitsandbytes' 4-bit block: one absmax constant per 64 weights.
pub const NF4_BLOCK: f64 = 64.0;
/// Double quantization stores each block's absmax in 8 bits, plus one fp32 constant per 256
/// blocks (bitsandbytes' defaults).
pub const DQ_BLOCKS: f64 = 256.0;
/// LLM.int8(): one byte a weight, one fp32 scale per output row.
pub const INT8_CODE_BYTES: f64 = 1.0;
/// fp32, the dtype of adapters (PEFT keeps them in fp32 even on a 16-bit base), master weights
/// and quantization constants.
pub const FP32: f64 = 4.0;

/// Bytes of quantization constants per weight of a 4-bit matrix.
pub fn nf4_constant_bytes(double_quant: bool) -> f64 {
    if double_quant {
        1.0 / NF4_BLOCK + FP32 / (NF4_BLOCK * DQ_BLOCKS)
    } else {
        FP32 / NF4_BLOCK
    }
}

/// The weights a setup keeps resident, by part.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct WeightBytes {
    /// Weights in 16 or 32 bits (all of them, or the part quantization leaves alone).
    pub plain: f64,
    /// Quantized codes of the blocks' linear layers.
    pub codes: f64,
    /// Their quantization constants.
    pub constants: f64,
    /// fp32 master copy of the trainable weights (mixed precision, full training).
    pub master: f64,
    /// LoRA adapters (fp32).
    pub adapters: f64,
}

impl WeightBytes {
    /// All weight bytes.
    pub fn total(&self) -> f64 {
        self.plain + self.codes + self.constants + self.master + self.adapters
    }
}

/// Bytes of one trainable value in full training: the weights' own dtype.
pub fn full_param_bytes(p: Precision) -> f64 {
    match p {
        Precision::Fp32 => 4.0,
        _ => 2.0,
    }
}

/// Bytes a parameter that is not quantized takes in the frozen base.
fn frozen_plain_bytes(setup: &Setup) -> f64 {
    if setup.quant != Quant::None && setup.kbit_upcast {
        FP32
    } else {
        setup.precision.compute_bytes()
    }
}

/// The resident weights, by part.
pub fn weight_bytes(shape: &Shape, setup: &Setup, lora_params: u64) -> WeightBytes {
    let p = shape.params();
    let mut w = WeightBytes::default();
    match setup.method {
        Method::Full => {
            w.plain = p.total as f64 * full_param_bytes(setup.precision);
            if setup.precision.is_mixed() {
                w.master = p.total as f64 * FP32;
            }
        }
        Method::Lora | Method::Qlora => {
            w.adapters = lora_params as f64 * FP32;
            let linear = p.linear as f64;
            match setup.quant {
                Quant::None => w.plain = p.total as f64 * setup.precision.compute_bytes(),
                Quant::Nf4 => {
                    w.plain = p.unquantized() as f64 * frozen_plain_bytes(setup);
                    w.codes = linear * NF4_CODE_BYTES;
                    w.constants = linear * nf4_constant_bytes(setup.double_quant);
                }
                Quant::Int8 => {
                    w.plain = p.unquantized() as f64 * frozen_plain_bytes(setup);
                    w.codes = linear * INT8_CODE_BYTES;
                    let rows: u64 = shape.linears().iter().map(|l| l.d_out).sum();
                    w.constants = (shape.layers * rows) as f64 * FP32;
                }
            }
        }
    }
    w
}

/// The linear layers `targets` picks, or an error naming the modules there are.
pub fn targeted(shape: &Shape, targets: &Targets) -> Result<Vec<Linear>, String> {
    let linears = shape.linears();
    let names: Vec<String> = match targets {
        Targets::AllLinear => return Ok(linears),
        Targets::Default => shape
            .family
            .default_lora_targets()
            .iter()
            .map(|s| s.to_string())
            .collect(),
        Targets::Names(n) => n.clone(),
    };
    let hits = |t: &str, l: &Linear| l.name == t || l.name.ends_with(&format!(".{t}"));
    for t in &names {
        if !linears.iter().any(|l| hits(t, l)) {
            let short: Vec<&str> = linears
                .iter()
                .map(|l| l.name.rsplit('.').next().unwrap_or(l.name))
                .collect();
            return Err(format!(
                "--lora-targets: no linear layer of a {} block is called `{}`; its linear layers \
                 are {} (or use all-linear)",
                shape.family.model_type(),
                t.escape_debug(),
                short.join(", ")
            ));
        }
    }
    Ok(linears
        .into_iter()
        .filter(|l| names.iter().any(|t| hits(t, l)))
        .collect())
}

/// LoRA parameters: `r·(d_in + d_out)` for every targeted matrix of every layer.
pub fn lora_params(shape: &Shape, rank: u64, targets: &Targets) -> Result<u64, String> {
    let per_layer: u64 = targeted(shape, targets)?
        .iter()
        .map(|l| rank * (l.d_in + l.d_out))
        .sum();
    Ok(shape.layers * per_layer)
}

/// The trainable parameters of a setup.
pub fn trainable_params(shape: &Shape, setup: &Setup) -> Result<u64, String> {
    match setup.method {
        Method::Full => Ok(shape.params().total),
        Method::Lora | Method::Qlora => lora_params(shape, setup.lora_rank, &setup.lora_targets),
    }
}

/// Bytes of one gradient value: adapters' are fp32, full training's are the weights' dtype.
pub fn grad_bytes(setup: &Setup) -> f64 {
    if setup.adapters() {
        FP32
    } else {
        full_param_bytes(setup.precision)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_bit_constants_are_half_a_bit_or_about_an_eighth_with_double_quant() {
        assert_eq!(nf4_constant_bytes(false) * 8.0, 0.5);
        assert!((nf4_constant_bytes(true) * 8.0 - 0.127).abs() < 1e-3);
    }

    #[test]
    fn unknown_targets_name_the_modules_there_are() {
        let s = Shape::llama_style(2, 64, 128, 4, 4, 100);
        let e = lora_params(&s, 8, &Targets::Names(vec!["c_attn".into()])).unwrap_err();
        assert!(
            e.contains("q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj"),
            "{e}"
        );
    }
}
