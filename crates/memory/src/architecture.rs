//! What a model is made of, as far as memory is concerned: its [`Shape`] (the fields of an HF
//! config.json) and the parameter inventory that follows from it, split the way training memory
//! splits it — the linear layers that 4-bit and 8-bit quantization replace, and everything that
//! stays unquantized (embeddings, norms, biases, the output head).
//!
//! The inventory follows the module layout of each family's transformers implementation (names
//! included, so `--lora-targets q_proj,v_proj` means what it means in PEFT).

use serde::Serialize;

/// The model families whose config.json mldebug reads, plus shapes given as flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Llama and its descendants (`LlamaForCausalLM`).
    Llama,
    /// Mistral.
    Mistral,
    /// Qwen 2.
    Qwen2,
    /// Qwen 3 (per-head q/k norms).
    Qwen3,
    /// Gemma.
    Gemma,
    /// Gemma 2 (four norms per layer, logit soft-capping).
    Gemma2,
    /// Phi-3.
    Phi3,
    /// GPT-2.
    Gpt2,
    /// GPT-NeoX (Pythia).
    GptNeox,
    /// BERT.
    Bert,
    /// A llama-style decoder described by flags (`--layers --hidden ...` or `--params`).
    Flags,
}

impl Family {
    /// The `model_type` of config.json.
    pub fn model_type(self) -> &'static str {
        match self {
            Family::Llama => "llama",
            Family::Mistral => "mistral",
            Family::Qwen2 => "qwen2",
            Family::Qwen3 => "qwen3",
            Family::Gemma => "gemma",
            Family::Gemma2 => "gemma2",
            Family::Phi3 => "phi3",
            Family::Gpt2 => "gpt2",
            Family::GptNeox => "gpt_neox",
            Family::Bert => "bert",
            Family::Flags => "llama-style (flags)",
        }
    }

    /// The modules PEFT's LoRA targets when none are named (its per-model-type defaults).
    pub fn default_lora_targets(self) -> &'static [&'static str] {
        match self {
            Family::Phi3 => &["qkv_proj"],
            Family::Gpt2 => &["c_attn"],
            Family::GptNeox => &["query_key_value"],
            Family::Bert => &["query", "value"],
            _ => &["q_proj", "v_proj"],
        }
    }
}

/// The feed-forward block: gated (gate, up, down: SwiGLU/GeGLU) or plain (in, activation, out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mlp {
    /// gate, up and down projections.
    Gated,
    /// in and out projections around the activation.
    Plain,
}

/// RMSNorm (a weight per unit) or LayerNorm (a weight and a bias per unit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Norm {
    /// RMSNorm.
    Rms,
    /// LayerNorm.
    Layer,
}

impl Norm {
    fn params_per_unit(self) -> u64 {
        match self {
            Norm::Rms => 1,
            Norm::Layer => 2,
        }
    }
}

/// What sits on top of the last layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Head {
    /// A vocabulary projection (tied to the input embedding or not): logits `[b, s, V]`.
    LanguageModel,
    /// BERT's masked-LM head: a dense layer, a LayerNorm, the tied decoder and its bias: logits
    /// `[b, s, V]`.
    MaskedLm,
    /// BERT's pooler and a classifier: no vocabulary-sized logits.
    Classifier {
        /// Output classes.
        labels: u64,
    },
}

/// The shape of a transformer, as config.json gives it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shape {
    /// The family it was read as.
    pub family: Family,
    /// Transformer layers.
    pub layers: u64,
    /// Model width.
    pub hidden: u64,
    /// Hidden width of the MLP.
    pub intermediate: u64,
    /// Attention (query) heads.
    pub heads: u64,
    /// Key and value heads (fewer under grouped-query attention).
    pub kv_heads: u64,
    /// Width of one head.
    pub head_dim: u64,
    /// Vocabulary size.
    pub vocab: u64,
    /// The output projection shares the input embedding's weights.
    pub tied_embeddings: bool,
    /// The feed-forward block.
    pub mlp: Mlp,
    /// The normalisation layers.
    pub norm: Norm,
    /// Norms per layer (2; Gemma 2 has 4).
    pub norms_per_layer: u64,
    /// Qwen3's per-head RMSNorm on q and k.
    pub qk_norm: bool,
    /// Biases on the q, k and v projections.
    pub qkv_bias: bool,
    /// Bias on the attention output projection.
    pub out_bias: bool,
    /// Biases on the MLP projections.
    pub mlp_bias: bool,
    /// Learned absolute position embeddings (GPT-2, BERT); 0 for rotary models.
    pub positions: u64,
    /// BERT's token-type embeddings.
    pub token_types: u64,
    /// A LayerNorm after the embeddings (BERT) instead of one after the last layer.
    pub embedding_norm: bool,
    /// What sits on top of the last layer.
    pub head: Head,
    /// Dropout on the attention probabilities (0 = none stored).
    pub attention_dropout: f64,
    /// Dropout on the residual branches (0 = none stored).
    pub hidden_dropout: f64,
    /// Gemma 2's final logit soft-capping: one more logits-sized tensor.
    pub logit_softcap: bool,
    /// The longest context the model was trained for (0 = not given).
    pub max_positions: u64,
}

/// One linear layer of a block: its module name (as PEFT matches it) and its dimensions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Linear {
    /// Its module name, as PEFT matches it (`q_proj`).
    pub name: &'static str,
    /// Input features.
    pub d_in: u64,
    /// Output features.
    pub d_out: u64,
    /// It has a bias.
    pub bias: bool,
}

impl Linear {
    /// Its weight count (the bias left out).
    pub fn weights(&self) -> u64 {
        self.d_in * self.d_out
    }
}

/// Parameter counts, split the way memory splits them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ParamCounts {
    /// Every parameter.
    pub total: u64,
    /// The weight matrices of the blocks' linear layers: what 4-bit and 8-bit quantization replace.
    pub linear: u64,
    /// Token (and position, token-type) embeddings.
    pub embeddings: u64,
    /// The output head when it is not tied to the embeddings (with BERT's head layers).
    pub head: u64,
    /// Norm weights and biases.
    pub norms: u64,
    /// Biases of the linear layers.
    pub biases: u64,
    /// The largest single weight matrix (for per-tensor temporaries).
    pub largest_matrix: u64,
}

impl ParamCounts {
    /// What quantization leaves unquantized.
    pub fn unquantized(&self) -> u64 {
        self.total - self.linear
    }
}

impl Shape {
    /// Width of q (and of the attention output before `o_proj`).
    pub fn q_width(&self) -> u64 {
        self.heads * self.head_dim
    }

    /// Width of k and of v.
    pub fn kv_width(&self) -> u64 {
        self.kv_heads * self.head_dim
    }

    /// The linear layers of one block, with their module names.
    pub fn linears(&self) -> Vec<Linear> {
        let (h, q, kv, m) = (
            self.hidden,
            self.q_width(),
            self.kv_width(),
            self.intermediate,
        );
        let lin = |name, d_in, d_out, bias| Linear {
            name,
            d_in,
            d_out,
            bias,
        };
        match self.family {
            Family::Phi3 => vec![
                lin("self_attn.qkv_proj", h, q + 2 * kv, self.qkv_bias),
                lin("self_attn.o_proj", q, h, self.out_bias),
                lin("mlp.gate_up_proj", h, 2 * m, self.mlp_bias),
                lin("mlp.down_proj", m, h, self.mlp_bias),
            ],
            Family::Gpt2 => vec![
                lin("attn.c_attn", h, 3 * h, true),
                lin("attn.c_proj", h, h, true),
                lin("mlp.c_fc", h, m, true),
                lin("mlp.c_proj", m, h, true),
            ],
            Family::GptNeox => vec![
                lin("attention.query_key_value", h, 3 * h, self.qkv_bias),
                lin("attention.dense", h, h, self.out_bias),
                lin("mlp.dense_h_to_4h", h, m, self.mlp_bias),
                lin("mlp.dense_4h_to_h", m, h, self.mlp_bias),
            ],
            Family::Bert => vec![
                lin("attention.self.query", h, h, true),
                lin("attention.self.key", h, h, true),
                lin("attention.self.value", h, h, true),
                lin("attention.output.dense", h, h, true),
                lin("intermediate.dense", h, m, true),
                lin("output.dense", m, h, true),
            ],
            _ => {
                let mut v = vec![
                    lin("self_attn.q_proj", h, q, self.qkv_bias),
                    lin("self_attn.k_proj", h, kv, self.qkv_bias),
                    lin("self_attn.v_proj", h, kv, self.qkv_bias),
                    lin("self_attn.o_proj", q, h, self.out_bias),
                ];
                if self.mlp == Mlp::Gated {
                    v.push(lin("mlp.gate_proj", h, m, self.mlp_bias));
                }
                v.push(lin("mlp.up_proj", h, m, self.mlp_bias));
                v.push(lin("mlp.down_proj", m, h, self.mlp_bias));
                v
            }
        }
    }

    /// Every parameter, counted from the shape.
    pub fn params(&self) -> ParamCounts {
        let (h, l, v) = (self.hidden, self.layers, self.vocab);
        let linears = self.linears();
        let linear = l * linears.iter().map(Linear::weights).sum::<u64>();
        let biases = l * linears
            .iter()
            .filter(|x| x.bias)
            .map(|x| x.d_out)
            .sum::<u64>();
        let embeddings = (v + self.positions + self.token_types) * h;
        let per_unit = self.norm.params_per_unit();
        let mut norms = l * self.norms_per_layer * h * per_unit;
        if self.qk_norm {
            norms += l * 2 * self.head_dim;
        }
        // One norm after the embeddings (BERT) or after the last layer (every other family).
        norms += h * per_unit;
        let head = match self.head {
            Head::LanguageModel if self.tied_embeddings => 0,
            Head::LanguageModel => v * h,
            // Dense h→h with bias, a LayerNorm, and the decoder's bias (its weight is tied).
            Head::MaskedLm => h * h + h + 2 * h + v,
            // Pooler h→h with bias, then a classifier h→labels with bias.
            Head::Classifier { labels } => h * h + h + h * labels + labels,
        };
        let largest_matrix = linears
            .iter()
            .map(Linear::weights)
            .chain([v * h])
            .max()
            .unwrap_or(0);
        ParamCounts {
            total: linear + biases + embeddings + norms + head,
            linear,
            embeddings,
            head,
            norms,
            biases,
            largest_matrix,
        }
    }

    /// Whether the output is vocabulary-sized logits (`[b, s, V]`).
    pub fn has_vocab_logits(&self) -> bool {
        !matches!(self.head, Head::Classifier { .. })
    }

    /// A llama-style decoder with these dimensions (the shape flags), untied, no biases.
    pub fn llama_style(
        layers: u64,
        hidden: u64,
        intermediate: u64,
        heads: u64,
        kv_heads: u64,
        vocab: u64,
    ) -> Shape {
        Shape {
            family: Family::Flags,
            layers,
            hidden,
            intermediate,
            heads,
            kv_heads,
            head_dim: hidden / heads.max(1),
            vocab,
            tied_embeddings: false,
            mlp: Mlp::Gated,
            norm: Norm::Rms,
            norms_per_layer: 2,
            qk_norm: false,
            qkv_bias: false,
            out_bias: false,
            mlp_bias: false,
            positions: 0,
            token_types: 0,
            embedding_norm: false,
            head: Head::LanguageModel,
            attention_dropout: 0.0,
            hidden_dropout: 0.0,
            logit_softcap: false,
            max_positions: 0,
        }
    }
}

/// The most layers accepted.
pub const MAX_LAYERS: u64 = 100_000;
/// The widest hidden, MLP, head or attention width accepted.
pub const MAX_WIDTH: u64 = 1_000_000;
/// The largest vocabulary (and position table) accepted.
pub const MAX_VOCAB: u64 = 10_000_000;

impl Shape {
    /// Refuses shapes beyond [`MAX_LAYERS`], [`MAX_WIDTH`] and [`MAX_VOCAB`]: within them every
    /// count and product the estimate forms stays below 2^63.
    pub fn check_limits(&self) -> Result<(), String> {
        let checks = [
            ("layers", self.layers, MAX_LAYERS),
            ("hidden size", self.hidden, MAX_WIDTH),
            ("MLP size", self.intermediate, MAX_WIDTH),
            (
                "heads × head dimension",
                self.heads.saturating_mul(self.head_dim),
                MAX_WIDTH,
            ),
            ("vocabulary", self.vocab, MAX_VOCAB),
            ("positions", self.positions, MAX_VOCAB),
            ("token types", self.token_types, MAX_VOCAB),
        ];
        for (what, value, max) in checks {
            if value > max {
                return Err(format!(
                    "{what} {value} is more than the {max} mldebug accepts"
                ));
            }
        }
        for (what, value) in [
            ("layers", self.layers),
            ("hidden size", self.hidden),
            ("MLP size", self.intermediate),
            ("heads", self.heads),
            ("key/value heads", self.kv_heads),
            ("head dimension", self.head_dim),
            ("vocabulary", self.vocab),
        ] {
            if value == 0 {
                return Err(format!("{what} must be at least 1"));
            }
        }
        Ok(())
    }
}
