//! The training setup: what is trained (full, LoRA, QLoRA), in what precision, with which
//! optimizer, on what batch and context, with which attention kernel, on how many GPUs.
//!
//! Each choice is an enum with the spelling of its flag; [`Setup::validate`] refuses the
//! combinations that cannot run (quantized weights trained in full, double quantization of
//! 8-bit weights, sharding on one GPU), with words that say why.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// Declares a flag enum: its variants, their spellings, `FromStr` with the list of choices in
/// the error, `Display`, and `ALL`.
macro_rules! choice {
    ($(#[$doc:meta])* $name:ident, $what:literal, { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
        pub enum $name { $($(#[$vdoc])* #[serde(rename = $text)] $variant),+ }

        impl $name {
            /// Every choice, in the order the help lists them.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The spelling on the command line.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                $name::ALL.iter().copied().find(|c| c.as_str() == s).ok_or_else(|| {
                    let names: Vec<&str> = $name::ALL.iter().map(|c| c.as_str()).collect();
                    format!("unknown {} `{}`; expected one of {}", $what, s.escape_debug(), names.join(", "))
                })
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }
    };
}

choice!(
    /// What is trained.
    Method, "method", {
        /// Every parameter.
        Full = "full",
        /// Low-rank adapters on a frozen base.
        Lora = "lora",
        /// Adapters on a frozen base stored in 4 or 8 bits.
        Qlora = "qlora",
    }
);

choice!(
    /// Storage and compute precision.
    Precision, "precision", {
        /// Everything in fp32.
        Fp32 = "fp32",
        /// Weights, gradients and optimizer state in bf16.
        Bf16 = "bf16",
        /// Weights, gradients and optimizer state in fp16.
        Fp16 = "fp16",
        /// 16-bit weights and gradients, an fp32 master copy for the optimizer.
        MixedBf16 = "mixed-bf16",
        /// As mixed-bf16, in fp16.
        MixedFp16 = "mixed-fp16",
    }
);

choice!(
    /// How the frozen base's linear layers are stored.
    Quant, "quantization", {
        /// Not quantized.
        None = "none",
        /// bitsandbytes LLM.int8(): one byte a weight plus an fp32 scale per row.
        Int8 = "int8",
        /// bitsandbytes 4-bit NormalFloat: half a byte a weight plus block constants.
        Nf4 = "nf4",
    }
);

choice!(
    /// The optimizer.
    Optimizer, "optimizer", {
        /// AdamW: two fp32 moments per trained parameter.
        AdamW = "adamw",
        /// bitsandbytes' 8-bit AdamW: two one-byte moments plus block constants.
        AdamW8bit = "adamw-8bit",
        /// bitsandbytes' paged AdamW: AdamW's state, paged to the CPU under pressure.
        PagedAdamW = "paged-adamw",
        /// Plain SGD: no state.
        Sgd = "sgd",
        /// SGD with momentum: one buffer per trained parameter.
        SgdMomentum = "sgd-momentum",
        /// Adafactor: factored second moments (a row and a column per matrix).
        Adafactor = "adafactor",
    }
);

choice!(
    /// The attention kernel, which decides whether the heads × context² scores are stored.
    Attention, "attention implementation", {
        /// Matmul, softmax, matmul: the probabilities are kept for backward.
        Eager = "eager",
        /// PyTorch's fused scaled_dot_product_attention: no score matrix kept.
        Sdpa = "sdpa",
        /// FlashAttention: no score matrix kept.
        Flash = "flash",
    }
);

choice!(
    /// How model state is split over GPUs.
    Shard, "sharding", {
        /// Every GPU holds everything.
        None = "none",
        /// Optimizer state split.
        Zero1 = "zero1",
        /// Optimizer state and gradients split.
        Zero2 = "zero2",
        /// Optimizer state, gradients and weights split.
        Zero3 = "zero3",
        /// PyTorch FSDP (full sharding): as ZeRO-3.
        Fsdp = "fsdp",
    }
);

impl Precision {
    /// Bytes of a 16- or 32-bit value in this precision's compute dtype.
    pub fn compute_bytes(self) -> f64 {
        match self {
            Precision::Fp32 => 4.0,
            _ => 2.0,
        }
    }

    /// Mixed precision: 16-bit compute with fp32 master weights.
    pub fn is_mixed(self) -> bool {
        matches!(self, Precision::MixedBf16 | Precision::MixedFp16)
    }
}

/// Which linear layers get LoRA adapters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Targets {
    /// PEFT's default for the model type.
    Default,
    /// Every linear layer of the blocks (PEFT's `all-linear`; the output head is left out).
    AllLinear,
    /// Module names, matched against the end of each linear's name (`q_proj`, `c_attn`).
    Names(Vec<String>),
}

impl FromStr for Targets {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "all-linear" {
            return Ok(Targets::AllLinear);
        }
        let names: Vec<String> = s.split(',').map(|n| n.trim().to_string()).collect();
        if names.iter().any(|n| {
            n.is_empty()
                || !n
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        }) {
            return Err(format!(
                "`{}` is not a list of module names (expected e.g. q_proj,v_proj or all-linear)",
                s.escape_debug()
            ));
        }
        Ok(Targets::Names(names))
    }
}

/// The whole training setup.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setup {
    /// Full fine-tuning, LoRA or QLoRA.
    pub method: Method,
    /// LoRA rank `r`.
    pub lora_rank: u64,
    /// The matrices LoRA adapts.
    pub lora_targets: Targets,
    /// Weights' and compute's precision.
    pub precision: Precision,
    /// Quantization of the base weights.
    pub quant: Quant,
    /// bitsandbytes' double quantization of the block constants.
    pub double_quant: bool,
    /// PEFT's `prepare_model_for_kbit_training`: with a quantized base, every parameter that is
    /// not quantized is cast to fp32 (and the hidden states that flow through them with it).
    pub kbit_upcast: bool,
    /// The optimizer, which decides the state per trained parameter.
    pub optimizer: Optimizer,
    /// Micro-batch per GPU.
    pub batch: u64,
    /// Tokens per sequence.
    pub seq: u64,
    /// Micro-batches accumulated per optimizer step.
    pub grad_accum: u64,
    /// Activations recomputed in backward instead of stored (one layer input kept).
    pub grad_checkpointing: bool,
    /// How attention is computed, which decides whether the score matrix is stored.
    pub attention: Attention,
    /// GPUs the run is spread over.
    pub gpus: u64,
    /// How model states are sharded over them.
    pub shard: Shard,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            method: Method::Full,
            lora_rank: 8,
            lora_targets: Targets::Default,
            precision: Precision::MixedBf16,
            quant: Quant::None,
            double_quant: false,
            kbit_upcast: true,
            optimizer: Optimizer::AdamW,
            batch: 1,
            seq: 2048,
            grad_accum: 1,
            grad_checkpointing: false,
            attention: Attention::Sdpa,
            gpus: 1,
            shard: Shard::None,
        }
    }
}

impl Setup {
    /// Whether the base is frozen and adapters are trained.
    pub fn adapters(&self) -> bool {
        self.method != Method::Full
    }

    /// The combinations that cannot run, with the reason; QLoRA without `--quant` means nf4.
    pub fn validate(mut self) -> Result<Setup, String> {
        if self.method == Method::Qlora && self.quant == Quant::None {
            self.quant = Quant::Nf4;
        }
        if self.method == Method::Lora && self.quant != Quant::None {
            self.method = Method::Qlora;
        }
        if self.method == Method::Full && self.quant != Quant::None {
            return Err(format!(
                "--quant {} with --method full: quantized weights cannot be trained directly; \
                 train adapters on them with --method qlora",
                self.quant
            ));
        }
        if self.double_quant && self.quant != Quant::Nf4 {
            return Err("--double-quant applies to 4-bit weights only (--quant nf4)".into());
        }
        if self.shard != Shard::None && self.gpus < 2 {
            return Err(format!(
                "--shard {} splits state over GPUs; give --gpus 2 or more",
                self.shard
            ));
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_parse_and_the_error_lists_them() {
        assert_eq!("mixed-bf16".parse(), Ok(Precision::MixedBf16));
        assert_eq!("adamw-8bit".parse(), Ok(Optimizer::AdamW8bit));
        let e = "adam".parse::<Optimizer>().unwrap_err();
        assert!(e.contains("adamw, adamw-8bit, paged-adamw"), "{e}");
    }

    #[test]
    fn targets_are_names_or_all_linear() {
        assert_eq!("all-linear".parse(), Ok(Targets::AllLinear));
        assert_eq!(
            "q_proj,v_proj".parse(),
            Ok(Targets::Names(vec!["q_proj".into(), "v_proj".into()]))
        );
        assert!("q_proj,,v".parse::<Targets>().is_err());
        assert!("q_proj;rm".parse::<Targets>().is_err());
    }

    #[test]
    fn impossible_setups_are_refused_with_a_reason() {
        let full_nf4 = Setup {
            quant: Quant::Nf4,
            ..Setup::default()
        };
        assert!(full_nf4.validate().unwrap_err().contains("--method qlora"));
        let qlora = Setup {
            method: Method::Qlora,
            ..Setup::default()
        };
        assert_eq!(qlora.validate().unwrap().quant, Quant::Nf4);
        let shard = Setup {
            shard: Shard::Zero3,
            ..Setup::default()
        };
        assert!(shard.validate().unwrap_err().contains("--gpus 2"));
        let dq = Setup {
            method: Method::Qlora,
            quant: Quant::Int8,
            double_quant: true,
            ..Setup::default()
        };
        assert!(dq.validate().is_err());
    }
}
