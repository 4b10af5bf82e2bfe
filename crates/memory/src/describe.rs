//! The "how" column of the estimate: how each component was counted, in words, with the
//! numbers that went into it.

use crate::activations::activation_bytes;
use crate::architecture::Shape;
use crate::setup::{Attention, Method, Quant, Setup, Shard};
use crate::weights::{full_param_bytes, nf4_constant_bytes, WeightBytes, FP32, NF4_BLOCK};
use mldebug_text::number::{grouped, human_bytes, human_count};

/// Pushes the weight lines: 16/32-bit weights (or what quantization leaves), codes, constants,
/// master copy, adapters.
pub fn weights(
    shape: &Shape,
    setup: &Setup,
    w: &WeightBytes,
    push: &mut impl FnMut(&'static str, String, f64, String),
) {
    let p = shape.params();
    let dtype = |bytes: f64| if bytes == FP32 { "fp32" } else { "16-bit" };
    match (setup.method, setup.quant) {
        (Method::Full, _) => {
            let b = full_param_bytes(setup.precision);
            push(
                "weights",
                format!("weights ({})", dtype(b)),
                w.plain,
                format!("{} parameters × {b} bytes", grouped(p.total)),
            );
        }
        (_, Quant::None) => {
            let b = setup.precision.compute_bytes();
            push(
                "weights",
                format!("weights, frozen ({})", dtype(b)),
                w.plain,
                format!("{} parameters × {b} bytes", grouped(p.total)),
            );
        }
        (_, quant) => {
            let b = w.plain / p.unquantized().max(1) as f64;
            push(
                "weights.unquantized",
                format!("weights left unquantized ({})", dtype(b)),
                w.plain,
                format!(
                    "embeddings, output head, norms, biases: {} parameters × {b} bytes{}",
                    grouped(p.unquantized()),
                    if setup.kbit_upcast {
                        " (cast to fp32 by prepare_model_for_kbit_training)"
                    } else {
                        ""
                    }
                ),
            );
            let (name, per) = match quant {
                Quant::Nf4 => ("4-bit", 0.5),
                _ => ("8-bit", 1.0),
            };
            push(
                "weights.codes",
                format!("weights: {name} codes"),
                w.codes,
                format!("{} linear-layer weights × {per} bytes", grouped(p.linear)),
            );
            let constants = match quant {
                Quant::Nf4 if setup.double_quant => format!(
                    "{:.4} bytes a weight: an 8-bit absmax per {NF4_BLOCK} weights, double-quantized",
                    nf4_constant_bytes(true)
                ),
                Quant::Nf4 => format!(
                    "one fp32 absmax per {NF4_BLOCK} weights: {} bytes a weight",
                    nf4_constant_bytes(false)
                ),
                _ => "one fp32 scale per output row".into(),
            };
            push(
                "weights.constants",
                "weights: quantization constants".into(),
                w.constants,
                constants,
            );
        }
    }
    push(
        "weights.master",
        "master weights (fp32)".into(),
        w.master,
        format!("mixed precision: {} parameters × 4 bytes", grouped(p.total)),
    );
    push(
        "adapters",
        "LoRA adapters (fp32)".into(),
        w.adapters,
        format!(
            "rank {} on {}: {} parameters, r·(d_in + d_out) per matrix, × 4 bytes",
            setup.lora_rank,
            target_names(shape, setup),
            grouped((w.adapters / FP32) as u64)
        ),
    );
}

fn target_names(shape: &Shape, setup: &Setup) -> String {
    crate::weights::targeted(shape, &setup.lora_targets)
        .map(|ls| {
            let mut names: Vec<&str> = ls
                .iter()
                .map(|l| l.name.rsplit('.').next().unwrap_or(l.name))
                .collect();
            names.dedup();
            names.join(", ")
        })
        .unwrap_or_default()
}

/// ", split over N GPUs (zero2)" when `setup` shards at least at `from`.
pub fn sharded(setup: &Setup, from: Shard) -> String {
    let level = |s: Shard| match s {
        Shard::None => 0,
        Shard::Zero1 => 1,
        Shard::Zero2 => 2,
        Shard::Zero3 | Shard::Fsdp => 3,
    };
    if level(setup.shard) >= level(from) && setup.shard != Shard::None {
        format!(", split over {} GPUs ({})", setup.gpus, setup.shard)
    } else {
        String::new()
    }
}

/// How the activations were counted.
pub fn activations(shape: &Shape, setup: &Setup, layer: f64) -> String {
    let bytes = activation_bytes(setup);
    let kernel = match setup.attention {
        Attention::Eager => "eager attention keeps the heads × s² probabilities",
        Attention::Sdpa => "SDPA keeps no score matrix",
        Attention::Flash => "FlashAttention keeps no score matrix",
    };
    let depth = if setup.grad_checkpointing {
        format!(
            "checkpointing: each layer's input × {} layers, plus one layer of {} while it runs",
            shape.layers,
            human_bytes(layer)
        )
    } else {
        format!("{} a layer × {} layers", human_bytes(layer), shape.layers)
    };
    format!(
        "{depth}; b={} s={} in {bytes}-byte values, Korthikanti et al. 2022; {kernel}",
        setup.batch, setup.seq
    )
}

/// How the logits were counted.
pub fn logits(shape: &Shape, setup: &Setup) -> String {
    let values = setup.batch * setup.seq * shape.vocab;
    let out = activation_bytes(setup);
    let copy = if out < FP32 {
        ", an fp32 copy for the loss"
    } else {
        ""
    };
    format!(
        "b·s·V = {} values: the logits ({out} bytes){copy}, the loss's fp32 log-softmax",
        human_count(values)
    )
}

/// What the arithmetic assumes for this shape and setup, in words.
pub fn assumptions(shape: &Shape, setup: &Setup, guessed: bool) -> Vec<String> {
    let mut out = Vec::new();
    if guessed {
        out.push(format!(
            "shape guessed from the parameter count: {} layers, hidden {}, MLP {}, {} heads, \
             vocabulary {} (llama-style), {} parameters (the count within {}%); weights and \
             optimizer state follow the count, the activations only roughly",
            shape.layers,
            shape.hidden,
            shape.intermediate,
            shape.heads,
            shape.vocab,
            grouped(shape.params().total),
            crate::guess::GUESS_TOLERANCE * 100.0
        ));
    }
    out.push(
        "stages are those of a steady-state step: PyTorch allocates the optimizer state at the \
         first optimizer step, so the first forward and backward peak lower by that much"
            .into(),
    );
    out.push(format!(
        "activations in {}-byte values{}; batch {} is per GPU",
        activation_bytes(setup),
        if setup.quant != Quant::None && setup.kbit_upcast {
            " (the hidden states run in fp32 once the unquantized parameters are)"
        } else {
            ""
        },
        setup.batch
    ));
    if setup.adapters() {
        out.push(
            "adapters, their gradients and their optimizer state in fp32 (PEFT's default)".into(),
        );
    } else if setup.precision.is_mixed() {
        out.push(
            "mixed precision as DeepSpeed counts it: 16-bit weights and gradients, fp32 master \
             weights and moments (2 + 2 + 4 + 8 bytes per parameter with AdamW)"
                .into(),
        );
    }
    if shape.attention_dropout > 0.0 || shape.hidden_dropout > 0.0 {
        out.push("dropout as configured: its masks are kept (1 byte a value)".into());
    }
    out.push(
        "not modelled: dequantisation buffers, CUDA kernels' workspaces, evaluation and \
         generation, and fragmentation beyond the allocator slack"
            .into(),
    );
    out
}
