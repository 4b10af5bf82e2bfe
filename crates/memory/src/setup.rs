//! The training setup: what is trained (full, LoRA, QLoRA), in what precision, with which
//! optimizer, on what batch and context, with which attention kernel, on how many GPUs.
//!
//! Each choice is an enum with the spelling of its flag; [`Given`] holds the flags as given
//! (a flag left out is `None`, never its default) and resolves them to a [`Setup`];
//! [`Setup::validate`] refuses the combinations that cannot run (quantized weights trained in
//! full, QLoRA on an unquantized base, double quantization of 8-bit weights, sharding on one
//! GPU), with words that name the flags and say why.

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

    /// The combinations that cannot run, with the reason. Nothing is changed: a setup that
    /// names a value is estimated with that value or refused.
    pub fn validate(self) -> Result<Setup, String> {
        if self.method == Method::Qlora && self.quant == Quant::None {
            return Err(
                "--quant none with --method qlora: QLoRA trains adapters on a quantized base; \
                 give --method lora for an unquantized base, or --quant nf4|int8"
                    .into(),
            );
        }
        if self.method == Method::Full && self.quant != Quant::None {
            return Err(format!(
                "--quant {} with --method full: quantized weights cannot be trained directly; \
                 train adapters on them with --method qlora",
                self.quant
            ));
        }
        if self.double_quant && self.quant != Quant::Nf4 {
            return Err(format!(
                "--double-quant with --quant {}: double quantization applies to 4-bit weights \
                 only (--quant nf4)",
                self.quant
            ));
        }
        if !self.kbit_upcast && self.quant == Quant::None {
            return Err(
                "--no-kbit-upcast with --quant none: it keeps a quantized base's other \
                 parameters in 16 bits, and this base is not quantized"
                    .into(),
            );
        }
        if self.shard != Shard::None && self.gpus < 2 {
            return Err(format!(
                "--shard {} with --gpus {}: sharding splits state over GPUs; give --gpus 2 or more",
                self.shard, self.gpus
            ));
        }
        Ok(self)
    }
}

/// The training flags as they were given: `None` (or `false`) where a flag was left out, so
/// that a value given is never mistaken for a default. [`Given::resolve`] fills in the defaults
/// (QLoRA's base is nf4 unless `--quant` says otherwise) and refuses what contradicts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Given {
    /// `--method`.
    pub method: Option<Method>,
    /// `--lora-r`.
    pub lora_rank: Option<u64>,
    /// `--lora-targets`.
    pub lora_targets: Option<Targets>,
    /// `--precision`.
    pub precision: Option<Precision>,
    /// `--quant`.
    pub quant: Option<Quant>,
    /// `--double-quant`.
    pub double_quant: bool,
    /// `--no-kbit-upcast`.
    pub no_kbit_upcast: bool,
    /// `--optimizer`.
    pub optimizer: Option<Optimizer>,
    /// `--batch`.
    pub batch: Option<u64>,
    /// `--seq`.
    pub seq: Option<u64>,
    /// `--grad-accum`.
    pub grad_accum: Option<u64>,
    /// `--grad-checkpointing`.
    pub grad_checkpointing: bool,
    /// `--attention`.
    pub attention: Option<Attention>,
    /// `--gpus`.
    pub gpus: Option<u64>,
    /// `--shard`.
    pub shard: Option<Shard>,
}

impl Given {
    /// The flags given, as typed (`--batch`), in the order the help lists them.
    pub fn flags(&self) -> Vec<&'static str> {
        [
            ("--method", self.method.is_some()),
            ("--lora-r", self.lora_rank.is_some()),
            ("--lora-targets", self.lora_targets.is_some()),
            ("--precision", self.precision.is_some()),
            ("--quant", self.quant.is_some()),
            ("--double-quant", self.double_quant),
            ("--no-kbit-upcast", self.no_kbit_upcast),
            ("--optimizer", self.optimizer.is_some()),
            ("--batch", self.batch.is_some()),
            ("--seq", self.seq.is_some()),
            ("--grad-accum", self.grad_accum.is_some()),
            ("--grad-checkpointing", self.grad_checkpointing),
            ("--attention", self.attention.is_some()),
            ("--gpus", self.gpus.is_some()),
            ("--shard", self.shard.is_some()),
        ]
        .into_iter()
        .filter_map(|(flag, given)| given.then_some(flag))
        .collect()
    }

    /// The setup: each flag given as given, each left out at its default ([`Setup::default`];
    /// nf4 for `--method qlora`); contradictions refused with both flags named.
    pub fn resolve(self) -> Result<Setup, String> {
        let d = Setup::default();
        let method = self.method.unwrap_or(d.method);
        if method == Method::Full {
            for (flag, given) in [
                ("--lora-r", self.lora_rank.is_some()),
                ("--lora-targets", self.lora_targets.is_some()),
            ] {
                if given {
                    return Err(format!(
                        "{flag} with --method full: it shapes LoRA adapters, which full training \
                         has none of; give --method lora or qlora"
                    ));
                }
            }
        }
        let quant = match (self.quant, method) {
            (Some(q), _) => q,
            (None, Method::Qlora) => Quant::Nf4,
            (None, _) => d.quant,
        };
        Setup {
            method,
            lora_rank: self.lora_rank.unwrap_or(d.lora_rank),
            lora_targets: self.lora_targets.unwrap_or(d.lora_targets),
            precision: self.precision.unwrap_or(d.precision),
            quant,
            double_quant: self.double_quant,
            kbit_upcast: !self.no_kbit_upcast,
            optimizer: self.optimizer.unwrap_or(d.optimizer),
            batch: self.batch.unwrap_or(d.batch),
            seq: self.seq.unwrap_or(d.seq),
            grad_accum: self.grad_accum.unwrap_or(d.grad_accum),
            grad_checkpointing: self.grad_checkpointing,
            attention: self.attention.unwrap_or(d.attention),
            gpus: self.gpus.unwrap_or(d.gpus),
            shard: self.shard.unwrap_or(d.shard),
        }
        .validate()
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

    /// A flag left out takes its default; a flag given is kept or the combination refused,
    /// naming both flags: never replaced by what it would have been had it been left out.
    #[test]
    fn a_flag_given_is_never_read_as_its_default() {
        let qlora = Given {
            method: Some(Method::Qlora),
            ..Given::default()
        };
        assert_eq!(qlora.clone().resolve().unwrap().quant, Quant::Nf4);
        // (given, what the error must name, or the value the setup must keep)
        let refused: &[(Given, &[&str])] = &[
            (
                Given {
                    quant: Some(Quant::None),
                    ..qlora.clone()
                },
                &["--quant none", "--method qlora"],
            ),
            (
                Given {
                    quant: Some(Quant::Nf4),
                    ..Given::default()
                },
                &["--quant nf4", "--method full"],
            ),
            (
                Given {
                    lora_rank: Some(16),
                    ..Given::default()
                },
                &["--lora-r", "--method full"],
            ),
            (
                Given {
                    lora_targets: Some(Targets::AllLinear),
                    method: Some(Method::Full),
                    ..Given::default()
                },
                &["--lora-targets", "--method full"],
            ),
            (
                Given {
                    double_quant: true,
                    quant: Some(Quant::Int8),
                    ..qlora.clone()
                },
                &["--double-quant", "--quant int8"],
            ),
            (
                Given {
                    no_kbit_upcast: true,
                    method: Some(Method::Lora),
                    ..Given::default()
                },
                &["--no-kbit-upcast", "--quant none"],
            ),
            (
                Given {
                    shard: Some(Shard::Fsdp),
                    gpus: Some(1),
                    ..Given::default()
                },
                &["--shard fsdp", "--gpus 1"],
            ),
        ];
        for (given, words) in refused {
            let e = given.clone().resolve().unwrap_err();
            for w in *words {
                assert!(e.contains(w), "{given:?}: `{w}` not in {e}");
            }
        }
        // Every value given reaches the setup unchanged.
        let all = Given {
            method: Some(Method::Lora),
            lora_rank: Some(4),
            lora_targets: Some(Targets::AllLinear),
            precision: Some(Precision::Fp16),
            quant: Some(Quant::Int8),
            double_quant: false,
            no_kbit_upcast: true,
            optimizer: Some(Optimizer::Sgd),
            batch: Some(3),
            seq: Some(7),
            grad_accum: Some(5),
            grad_checkpointing: true,
            attention: Some(Attention::Eager),
            gpus: Some(4),
            shard: Some(Shard::Zero2),
        };
        assert_eq!(all.flags().len(), 14);
        let s = all.resolve().unwrap();
        assert_eq!(
            (s.method, s.lora_rank, s.precision, s.quant, s.kbit_upcast),
            (Method::Lora, 4, Precision::Fp16, Quant::Int8, false)
        );
        assert_eq!(
            (
                s.optimizer,
                s.batch,
                s.seq,
                s.grad_accum,
                s.attention,
                s.gpus,
                s.shard
            ),
            (Optimizer::Sgd, 3, 7, 5, Attention::Eager, 4, Shard::Zero2)
        );
        assert!(s.grad_checkpointing && s.lora_targets == Targets::AllLinear);
        // A value given that equals the default is still a value given.
        let none_again = Given {
            method: Some(Method::Full),
            quant: Some(Quant::None),
            ..Given::default()
        };
        assert_eq!(none_again.resolve().unwrap(), Setup::default());
    }
}
