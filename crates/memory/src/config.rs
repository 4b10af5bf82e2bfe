//! HF `config.json` readers: llama, mistral, qwen2, qwen3, gemma, gemma2, phi3, gpt2, gpt_neox
//! and bert, each to a [`Shape`].
//!
//! Unknown fields are ignored (configs carry dozens: token ids, rope settings, dtypes). A field
//! the shape needs and the file lacks is an error naming the file, the field and the family.
//! Every field read has a range, and a value outside it, or of the wrong kind, is an error
//! naming the file, the field and the range: dimensions are whole numbers from 1 to their limit,
//! dropout probabilities lie in 0..=1, soft-capping is a finite number above 0, flags are true or
//! false, `architectures` is a list of names and `id2label` an object of 1 or more labels.
//! `null` counts as absent, as transformers reads it. Defaults are transformers' own for each
//! config class.

use crate::architecture::{Family, Head, Mlp, Norm, Shape};
use mldebug_text::input_error::{Error, Result};
use serde_json::{Map, Value};
use std::path::Path;

/// The families read, as `model_type` spells them.
pub const SUPPORTED: [&str; 10] = [
    "llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "phi3", "gpt2", "gpt_neox", "bert",
];

/// The largest values accepted, far above any published model and low enough that every
/// product the estimate forms stays exact in 64 bits (see [`Shape::check_limits`]).
pub use crate::architecture::{MAX_LAYERS, MAX_VOCAB, MAX_WIDTH};

/// The largest config.json read: published configs are a few kilobytes, the largest (a
/// classifier's `id2label` of tens of thousands of classes) about a megabyte.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// The limit for a config field.
fn limit(name: &str) -> u64 {
    match name {
        "num_hidden_layers" | "n_layer" => MAX_LAYERS,
        "vocab_size" | "max_position_embeddings" | "n_positions" | "type_vocab_size" => MAX_VOCAB,
        _ => MAX_WIDTH,
    }
}

/// Reads `text` (the contents of `file`) as a config.json.
pub fn parse(file: &Path, text: &str) -> Result<Shape> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        Error::input(
            file,
            format!("line {}, column {}", e.line(), e.column()),
            format!("not valid JSON: {e}"),
        )
    })?;
    let Some(obj) = value.as_object() else {
        return Err(Error::input(file, "top level", "expected a JSON object"));
    };
    let fields = Fields { file, obj };
    let model_type = fields.string("model_type")?;
    let family = match model_type.as_str() {
        "llama" => Family::Llama,
        "mistral" => Family::Mistral,
        "qwen2" => Family::Qwen2,
        "qwen3" => Family::Qwen3,
        "gemma" => Family::Gemma,
        "gemma2" => Family::Gemma2,
        "phi3" => Family::Phi3,
        "gpt2" => Family::Gpt2,
        "gpt_neox" => Family::GptNeox,
        "bert" => Family::Bert,
        other => {
            return Err(Error::input(
                file,
                "field `model_type`",
                format!(
                    "`{}` is not a family mldebug reads ({}); give the shape with --layers \
                     --hidden --intermediate --heads --kv-heads --vocab instead",
                    other.escape_debug(),
                    SUPPORTED.join(", ")
                ),
            ))
        }
    };
    let shape = match family {
        Family::Gpt2 => gpt2(&fields)?,
        Family::GptNeox => gpt_neox(&fields)?,
        Family::Bert => bert(&fields)?,
        _ => decoder(&fields, family)?,
    };
    check_heads(file, &shape)?;
    shape
        .check_limits()
        .map_err(|e| Error::input(file, "shape", e))?;
    Ok(shape)
}

/// llama, mistral, qwen2, qwen3, gemma, gemma2, phi3: the modern decoders.
fn decoder(f: &Fields, family: Family) -> Result<Shape> {
    let hidden = f.dim("hidden_size", family)?;
    let heads = f.dim("num_attention_heads", family)?;
    let kv_heads = f.opt_dim("num_key_value_heads")?.unwrap_or(heads);
    let head_dim = match f.opt_dim("head_dim")? {
        Some(d) => d,
        None => f.divide(hidden, heads, "hidden_size", "num_attention_heads")?,
    };
    // Gemma ties by default; the other config classes do not.
    let tied_default = matches!(family, Family::Gemma | Family::Gemma2);
    let attention_bias = f.opt_bool("attention_bias")?.unwrap_or(false);
    let mut shape = Shape::llama_style(
        f.dim("num_hidden_layers", family)?,
        hidden,
        f.dim("intermediate_size", family)?,
        heads,
        kv_heads,
        f.dim("vocab_size", family)?,
    );
    shape.family = family;
    shape.head_dim = head_dim;
    shape.tied_embeddings = f.opt_bool("tie_word_embeddings")?.unwrap_or(tied_default);
    // Qwen2 always has q, k, v biases; llama's `attention_bias` also puts one on o_proj.
    shape.qkv_bias = family == Family::Qwen2 || attention_bias;
    shape.out_bias = attention_bias && family != Family::Qwen2;
    shape.mlp_bias = f.opt_bool("mlp_bias")?.unwrap_or(false);
    shape.norms_per_layer = if family == Family::Gemma2 { 4 } else { 2 };
    shape.qk_norm = family == Family::Qwen3;
    shape.attention_dropout = f.opt_probability("attention_dropout")?.unwrap_or(0.0);
    shape.logit_softcap = f.opt_positive("final_logit_softcapping")?.is_some();
    shape.max_positions = f.opt_dim("max_position_embeddings")?.unwrap_or(0);
    Ok(shape)
}

fn gpt2(f: &Fields) -> Result<Shape> {
    let family = Family::Gpt2;
    let hidden = f.dim("n_embd", family)?;
    let heads = f.dim("n_head", family)?;
    let positions = f.dim("n_positions", family)?;
    let mut shape = Shape::llama_style(
        f.dim("n_layer", family)?,
        hidden,
        f.opt_dim("n_inner")?.unwrap_or(4 * hidden),
        heads,
        heads,
        f.dim("vocab_size", family)?,
    );
    shape.family = family;
    shape.head_dim = f.divide(hidden, heads, "n_embd", "n_head")?;
    shape.tied_embeddings = true;
    shape.mlp = Mlp::Plain;
    shape.norm = Norm::Layer;
    shape.qkv_bias = true;
    shape.out_bias = true;
    shape.mlp_bias = true;
    shape.positions = positions;
    shape.max_positions = positions;
    shape.attention_dropout = f.opt_probability("attn_pdrop")?.unwrap_or(0.1);
    shape.hidden_dropout = f.opt_probability("resid_pdrop")?.unwrap_or(0.1);
    Ok(shape)
}

fn gpt_neox(f: &Fields) -> Result<Shape> {
    let family = Family::GptNeox;
    let hidden = f.dim("hidden_size", family)?;
    let heads = f.dim("num_attention_heads", family)?;
    let bias = f.opt_bool("attention_bias")?.unwrap_or(true);
    let mut shape = Shape::llama_style(
        f.dim("num_hidden_layers", family)?,
        hidden,
        f.dim("intermediate_size", family)?,
        heads,
        heads,
        f.dim("vocab_size", family)?,
    );
    shape.family = family;
    shape.head_dim = f.divide(hidden, heads, "hidden_size", "num_attention_heads")?;
    shape.tied_embeddings = f.opt_bool("tie_word_embeddings")?.unwrap_or(false);
    shape.mlp = Mlp::Plain;
    shape.norm = Norm::Layer;
    shape.qkv_bias = bias;
    shape.out_bias = bias;
    shape.mlp_bias = true;
    shape.attention_dropout = f.opt_probability("attention_dropout")?.unwrap_or(0.0);
    shape.hidden_dropout = f.opt_probability("hidden_dropout")?.unwrap_or(0.0);
    shape.max_positions = f.opt_dim("max_position_embeddings")?.unwrap_or(0);
    Ok(shape)
}

fn bert(f: &Fields) -> Result<Shape> {
    let family = Family::Bert;
    let hidden = f.dim("hidden_size", family)?;
    let heads = f.dim("num_attention_heads", family)?;
    let positions = f.dim("max_position_embeddings", family)?;
    let mut shape = Shape::llama_style(
        f.dim("num_hidden_layers", family)?,
        hidden,
        f.dim("intermediate_size", family)?,
        heads,
        heads,
        f.dim("vocab_size", family)?,
    );
    shape.family = family;
    shape.head_dim = f.divide(hidden, heads, "hidden_size", "num_attention_heads")?;
    shape.tied_embeddings = true;
    shape.mlp = Mlp::Plain;
    shape.norm = Norm::Layer;
    shape.qkv_bias = true;
    shape.out_bias = true;
    shape.mlp_bias = true;
    shape.positions = positions;
    shape.max_positions = positions;
    shape.token_types = f.opt_dim("type_vocab_size")?.unwrap_or(2);
    shape.embedding_norm = true;
    shape.head = bert_head(f)?;
    shape.attention_dropout = f
        .opt_probability("attention_probs_dropout_prob")?
        .unwrap_or(0.1);
    shape.hidden_dropout = f.opt_probability("hidden_dropout_prob")?.unwrap_or(0.1);
    Ok(shape)
}

/// `architectures` decides BERT's head: a masked-LM head, a sequence classifier, or the bare
/// encoder with its pooler (`BertModel`, and when the field is absent).
fn bert_head(f: &Fields) -> Result<Head> {
    let architectures: Vec<String> = match f.obj.get("architectures") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        Some(other) => return Err(f.wrong_kind("architectures", "a list of names", other)),
    };
    let has = |part: &str| architectures.iter().any(|a| a.contains(part));
    if has("MaskedLM") || has("ForPreTraining") {
        return Ok(Head::MaskedLm);
    }
    if has("ForSequenceClassification") || has("ForTokenClassification") {
        return Ok(Head::Classifier {
            labels: f.labels()?,
        });
    }
    Ok(Head::Classifier { labels: 0 })
}

/// Heads must split the width they claim to split, and kv heads must divide the heads.
fn check_heads(file: &Path, s: &Shape) -> Result<()> {
    if s.kv_heads > s.heads || !s.heads.is_multiple_of(s.kv_heads) {
        return Err(Error::input(
            file,
            "field `num_key_value_heads`",
            format!(
                "{} key/value heads do not divide {} attention heads",
                s.kv_heads, s.heads
            ),
        ));
    }
    Ok(())
}

/// The object being read, with the file it came from for errors.
struct Fields<'a> {
    file: &'a Path,
    obj: &'a Map<String, Value>,
}

impl Fields<'_> {
    fn get(&self, name: &str) -> Option<&Value> {
        self.obj.get(name).filter(|v| !v.is_null())
    }

    fn string(&self, name: &str) -> Result<String> {
        match self.get(name) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(self.wrong_kind(name, "a string", other)),
            None => Err(Error::input(
                self.file,
                format!("field `{name}`"),
                "missing; mldebug needs it to know the model family",
            )),
        }
    }

    /// A required dimension: a whole number from 1 to the field's limit.
    fn dim(&self, name: &str, family: Family) -> Result<u64> {
        self.opt_dim(name)?.ok_or_else(|| {
            Error::input(
                self.file,
                format!("field `{name}`"),
                format!(
                    "missing; a {} config needs it for the shape",
                    family.model_type()
                ),
            )
        })
    }

    fn opt_dim(&self, name: &str) -> Result<Option<u64>> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let max = limit(name);
        match v.as_u64() {
            Some(n) if (1..=max).contains(&n) => Ok(Some(n)),
            _ => Err(self.wrong_kind(name, &format!("a whole number from 1 to {max}"), v)),
        }
    }

    fn opt_bool(&self, name: &str) -> Result<Option<bool>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.wrong_kind(name, "true or false", other)),
        }
    }

    /// A dropout probability: from 0 to 1, as torch's `nn.Dropout` accepts it.
    fn opt_probability(&self, name: &str) -> Result<Option<f64>> {
        self.opt_number(name, "a probability from 0 to 1", |x| {
            (0.0..=1.0).contains(&x)
        })
    }

    /// A positive finite number (a soft-capping scale, which divides the logits).
    fn opt_positive(&self, name: &str) -> Result<Option<f64>> {
        self.opt_number(name, "a finite number more than 0", |x| {
            x.is_finite() && x > 0.0
        })
    }

    fn opt_number(&self, name: &str, range: &str, ok: impl Fn(f64) -> bool) -> Result<Option<f64>> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(x) if ok(x) => Ok(Some(x)),
                _ => Err(self.wrong_kind(name, range, v)),
            },
        }
    }

    /// A count of labels (`id2label`'s entries) from 1 to [`MAX_VOCAB`].
    fn labels(&self) -> Result<u64> {
        match self.get("id2label") {
            None => Ok(2),
            Some(Value::Object(m)) if (1..=MAX_VOCAB as usize).contains(&m.len()) => {
                Ok(m.len() as u64)
            }
            Some(other) => Err(self.wrong_kind(
                "id2label",
                &format!("an object of 1 to {MAX_VOCAB} labels"),
                other,
            )),
        }
    }

    /// `a / b` when it divides evenly (head dimension from width and heads).
    fn divide(&self, a: u64, b: u64, a_name: &str, b_name: &str) -> Result<u64> {
        if a.is_multiple_of(b) {
            Ok(a / b)
        } else {
            Err(Error::input(
                self.file,
                format!("field `{b_name}`"),
                format!(
                    "{a_name} = {a} is not a multiple of {b_name} = {b}, and no head_dim is given"
                ),
            ))
        }
    }

    fn wrong_kind(&self, name: &str, expected: &str, got: &Value) -> Error {
        let full = got.to_string();
        let mut shown: String = full.chars().take(40).collect();
        if shown.len() < full.len() {
            shown.push('…');
        }
        Error::input(
            self.file,
            format!("field `{name}`"),
            format!("expected {expected}, found {shown}"),
        )
    }
}
