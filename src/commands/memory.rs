//! `mldebug memory`: where training memory goes, before you launch — weights, gradients,
//! optimizer state, activations, logits, per stage, against the GPUs you might use.
//!
//! The model comes from an HF `config.json` (`--config`), from shape flags (`--layers --hidden
//! --intermediate --heads --kv-heads --vocab`), or from a bare parameter count (`--params 7B`,
//! a rough answer: the activations then come from a guessed llama-style shape), or is a candle
//! model (`--model zoo::<name>` or `--model crate::Net`, whose harness is built as for `check`
//! and estimates without training). The arithmetic is
//! `mldebug-memory`'s; this file turns flags into its inputs and hands the result to
//! `render::memory`.

use crate::context::Context;
use crate::render::output::{emit, emit_json};
use crate::render::{json, memory as render_memory, style::Style};
use crate::{Error, Exit, Result};
use mldebug_memory::architecture::{guess_shape, Shape};
use mldebug_memory::estimate::estimate;
use mldebug_memory::fit::{self, Gpu, DEFAULT_HEADROOM, MAX_BATCH, MAX_SEQ};
use mldebug_memory::report::{MemoryReport, ModelMemory};
use mldebug_memory::setup::{
    Attention, Method, Optimizer, Precision, Quant, Setup, Shard, Targets,
};
use mldebug_memory::{config, units};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// An HF config.json (llama, mistral, qwen2, qwen3, gemma, gemma2, phi3, gpt2, gpt_neox, bert).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["params", "layers", "model"])]
    pub config: Option<PathBuf>,
    /// A candle model, built in (`zoo::<name>`) or in your crate (`crate::Net`, as for
    /// `mldebug check`): its real parameters counted and each stage estimated from its own
    /// autograd graph on its own batch, as `check memory` trains it (fp32, AdamW), without
    /// training it; `check memory` measures the same model beside this estimate.
    #[arg(long, value_name = "zoo::NAME|crate::PATH", conflicts_with_all = ["params", "layers"])]
    pub model: Option<String>,
    /// A parameter count (7B, 1.1B, 350M) for a rough answer: the activations then come from a
    /// guessed llama-style shape.
    #[arg(long, value_name = "COUNT", value_parser = units::parse_count, conflicts_with = "layers")]
    pub params: Option<u64>,
    #[command(flatten)]
    pub shape: ShapeArgs,
    #[command(flatten)]
    pub training: TrainingArgs,
    #[command(flatten)]
    pub target: TargetArgs,
    /// How to build a model in your crate (`--model crate::Net`); a model that needs the
    /// unedited-model settings reads them from `mldebug.toml` beside its Cargo.toml.
    #[command(flatten)]
    pub build: super::check::BuildArgs,
}

/// A llama-style decoder given by its dimensions.
#[derive(Debug, Clone, clap::Args)]
pub struct ShapeArgs {
    /// Layers (with --hidden, --heads and --vocab: a llama-style shape).
    #[arg(long, value_name = "N", requires_all = ["hidden", "heads", "vocab"], value_parser = |s: &str| units::parse_bounded(s, 1, mldebug_memory::architecture::MAX_LAYERS, "a layer count"))]
    pub layers: Option<u64>,
    /// Hidden size.
    #[arg(long, value_name = "N", requires = "layers", value_parser = width)]
    pub hidden: Option<u64>,
    /// MLP size (default: 4 × hidden).
    #[arg(long, value_name = "N", requires = "layers", value_parser = width)]
    pub intermediate: Option<u64>,
    /// Attention heads.
    #[arg(long, value_name = "N", requires = "layers", value_parser = width)]
    pub heads: Option<u64>,
    /// Key/value heads (default: as many as --heads).
    #[arg(long, value_name = "N", requires = "layers", value_parser = width)]
    pub kv_heads: Option<u64>,
    /// Vocabulary size.
    #[arg(long, value_name = "N", requires = "layers", value_parser = |s: &str| units::parse_bounded(s, 1, mldebug_memory::architecture::MAX_VOCAB, "a vocabulary size"))]
    pub vocab: Option<u64>,
}

fn width(s: &str) -> Result<u64, String> {
    units::parse_bounded(s, 1, mldebug_memory::architecture::MAX_WIDTH, "a width")
}

/// What is trained, and how.
#[derive(Debug, Clone, clap::Args)]
pub struct TrainingArgs {
    #[arg(long, default_value = "full", value_name = "full|lora|qlora")]
    pub method: Method,
    /// LoRA rank.
    #[arg(long = "lora-r", default_value_t = 8, value_name = "R", value_parser = |s: &str| units::parse_bounded(s, 1, 65_536, "a rank"))]
    pub lora_r: u64,
    /// Modules that get adapters: names (q_proj,v_proj) or all-linear (default: PEFT's for the
    /// model type).
    #[arg(long, value_name = "NAMES")]
    pub lora_targets: Option<Targets>,
    #[arg(
        long,
        default_value = "mixed-bf16",
        value_name = "fp32|bf16|fp16|mixed-bf16|mixed-fp16"
    )]
    pub precision: Precision,
    /// How the frozen base is stored (qlora defaults to nf4).
    #[arg(long, default_value = "none", value_name = "none|int8|nf4")]
    pub quant: Quant,
    /// Quantize the 4-bit block constants too (bitsandbytes' double quantization).
    #[arg(long)]
    pub double_quant: bool,
    /// Keep the unquantized parameters in the compute dtype (by default they are fp32, as PEFT's
    /// prepare_model_for_kbit_training casts them).
    #[arg(long)]
    pub no_kbit_upcast: bool,
    #[arg(
        long,
        default_value = "adamw",
        value_name = "adamw|adamw-8bit|paged-adamw|sgd|sgd-momentum|adafactor"
    )]
    pub optimizer: Optimizer,
    /// Micro-batch per GPU.
    #[arg(long, default_value_t = 1, value_parser = |s: &str| units::parse_bounded(s, 1, MAX_BATCH, "a batch size"))]
    pub batch: u64,
    /// Context length in tokens.
    #[arg(long, default_value_t = 2048, value_parser = |s: &str| units::parse_bounded(s, 1, MAX_SEQ, "a context length"))]
    pub seq: u64,
    /// Gradient accumulation steps (gradients then live through the forward passes too).
    #[arg(long, default_value_t = 1, value_parser = |s: &str| units::parse_bounded(s, 1, 65_536, "a step count"))]
    pub grad_accum: u64,
    /// Recompute activations in backward instead of keeping them.
    #[arg(long)]
    pub grad_checkpointing: bool,
    #[arg(long, default_value = "sdpa", value_name = "eager|sdpa|flash")]
    pub attention: Attention,
    /// GPUs the run is spread over.
    #[arg(long, default_value_t = 1, value_parser = |s: &str| units::parse_bounded(s, 1, 65_536, "a GPU count"))]
    pub gpus: u64,
    #[arg(
        long,
        default_value = "none",
        value_name = "none|zero1|zero2|zero3|fsdp"
    )]
    pub shard: Shard,
}

/// Which GPUs to hold the estimate against.
#[derive(Debug, Clone, clap::Args)]
pub struct TargetArgs {
    /// GPUs by name, comma-separated: t4, l4, a10, 3090, 4090, a100-40, a100-80, h100, h200
    /// (default: all of them).
    #[arg(long, value_name = "NAMES", conflicts_with = "gpu_memory")]
    pub gpu: Option<String>,
    /// A GPU of this size instead (24GB, 80GiB).
    #[arg(long, value_name = "SIZE", value_parser = units::parse_bytes)]
    pub gpu_memory: Option<f64>,
    /// Percent of the GPU kept free for evaluation and caching.
    #[arg(long, value_name = "PERCENT", default_value_t = (DEFAULT_HEADROOM * 100.0) as u64, value_parser = |s: &str| units::parse_bounded(s, 0, 90, "a percentage"))]
    pub headroom: u64,
}

pub fn run(args: Args, g: &Context) -> Result<Exit> {
    if let Some(model) = &args.model {
        return run_model(model, &args.build, g);
    }
    let (source, shape, guessed) = read_shape(&args)?;
    let setup = setup(&args.training)?;
    let estimate = estimate(&shape, &setup).map_err(Error::usage)?;
    let headroom = args.target.headroom as f64 / 100.0;
    let gpus = gpus(&args.target)?;
    let report = MemoryReport {
        targets: fit::targets(&shape, &setup, &estimate, &gpus, headroom),
        levers: fit::levers(&shape, &setup, &estimate),
        assumptions: mldebug_memory::describe::assumptions(&shape, &setup, guessed),
        source,
        shape,
        setup,
        estimate,
        headroom,
    };
    if g.json() {
        emit_json(&json::to_string("memory", &report)?)?;
    } else {
        let style = Style::from(g.stdout);
        emit(&render_memory::render(&report, &style), style.colour)?;
    }
    Ok(Exit::Ok)
}

/// The shape, where it came from, and whether it was guessed from a bare count.
fn read_shape(args: &Args) -> Result<(String, Shape, bool)> {
    if let Some(path) = &args.config {
        let text =
            std::fs::read_to_string(path).map_err(|e| Error::input(path, "reading it", e))?;
        let shape = config::parse(path, &text)?;
        return Ok((path.display().to_string(), shape, false));
    }
    let s = &args.shape;
    if let (Some(layers), Some(hidden), Some(heads), Some(vocab)) =
        (s.layers, s.hidden, s.heads, s.vocab)
    {
        let kv = s.kv_heads.unwrap_or(heads);
        if !hidden.is_multiple_of(heads) || kv > heads || !heads.is_multiple_of(kv) {
            return Err(Error::usage(format!(
                "--heads {heads} must divide --hidden {hidden}, and --kv-heads {kv} must divide --heads"
            )));
        }
        let intermediate = s.intermediate.unwrap_or(4 * hidden);
        let shape = Shape::llama_style(layers, hidden, intermediate, heads, kv, vocab);
        shape.check_limits().map_err(Error::usage)?;
        return Ok(("flags".into(), shape, false));
    }
    if let Some(count) = args.params {
        return Ok((format!("--params {count}"), guess_shape(count), true));
    }
    Err(Error::usage(
        "give the model: --config config.json, the shape (--layers --hidden --heads --vocab, \
         optionally --intermediate --kv-heads), or --params 7B for a rough answer",
    ))
}

fn setup(t: &TrainingArgs) -> Result<Setup> {
    Setup {
        method: t.method,
        lora_rank: t.lora_r,
        lora_targets: t.lora_targets.clone().unwrap_or(Targets::Default),
        precision: t.precision,
        quant: t.quant,
        double_quant: t.double_quant,
        kbit_upcast: !t.no_kbit_upcast,
        optimizer: t.optimizer,
        batch: t.batch,
        seq: t.seq,
        grad_accum: t.grad_accum,
        grad_checkpointing: t.grad_checkpointing,
        attention: t.attention,
        gpus: t.gpus,
        shard: t.shard,
    }
    .validate()
    .map_err(Error::usage)
}

fn gpus(t: &TargetArgs) -> Result<Vec<Gpu>> {
    if let Some(bytes) = t.gpu_memory {
        return Ok(vec![Gpu {
            name: "--gpu-memory",
            bytes,
        }]);
    }
    match &t.gpu {
        None => Ok(fit::GPUS.to_vec()),
        Some(list) => list
            .split(',')
            .map(|name| fit::gpu(name.trim()).map_err(|e| Error::usage(format!("--gpu: {e}"))))
            .collect(),
    }
}

/// `--model zoo::<name>|crate::Net`: the candle model's own estimate.
fn run_model(model: &str, build: &super::check::BuildArgs, g: &Context) -> Result<Exit> {
    let estimate = match model.strip_prefix("zoo::") {
        Some(name) => {
            let zoo_model = super::zoo::lookup(name)?;
            let opts = mldebug_diagnostics::Options {
                model_label: model.to_string(),
                ..mldebug_diagnostics::Options::default()
            };
            (zoo_model.estimate)(&opts, Default::default())
                .map_err(|e| Error::model(format!("{model}: estimating its memory: {e}")))?
        }
        None => crate::harness::estimate_memory(
            model,
            &build.settings(),
            &Default::default(),
            std::time::Duration::from_secs(crate::harness::DEFAULT_TIMEOUT_S),
            g,
        )?,
    };
    let report = ModelMemory {
        model: model.to_string(),
        estimate,
    };
    if g.json() {
        emit_json(&json::to_string("memory", &report)?)?;
    } else {
        let style = Style::from(g.stdout);
        emit(&render_memory::render_model(&report, &style), style.colour)?;
    }
    Ok(Exit::Ok)
}
