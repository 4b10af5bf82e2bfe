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
use mldebug_memory::architecture::Shape;
use mldebug_memory::estimate::estimate;
use mldebug_memory::fit::{self, Gpu, DEFAULT_HEADROOM, MAX_BATCH, MAX_SEQ};
use mldebug_memory::guess::{guess_shape, parse_guess_count};
use mldebug_memory::report::{MemoryReport, ModelMemory};
use mldebug_memory::setup::{
    Attention, Given, Method, Optimizer, Precision, Quant, Setup, Shard, Targets,
};
use mldebug_memory::{config, units};
use mldebug_text::bounded::Bounded;
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
    /// A parameter count from 1M to 100T (7B, 1.1B, 350M) for a rough answer: the activations
    /// then come from a guessed llama-style shape that holds this count (within 1%).
    #[arg(long, value_name = "COUNT", value_parser = parse_guess_count, conflicts_with = "layers")]
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
    #[arg(long, value_name = "N", requires_all = ["hidden", "heads", "vocab"], value_parser = |s: &str| Bounded::new(1, mldebug_memory::architecture::MAX_LAYERS, "a layer count").parse(s))]
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
    #[arg(long, value_name = "N", requires = "layers", value_parser = |s: &str| Bounded::new(1, mldebug_memory::architecture::MAX_VOCAB, "a vocabulary size").parse(s))]
    pub vocab: Option<u64>,
}

fn width(s: &str) -> Result<u64, String> {
    Bounded::new(1, mldebug_memory::architecture::MAX_WIDTH, "a width").parse(s)
}

/// What is trained, and how. Each flag is `None` when left out, so that a value given is never
/// taken for the default ([`Given`] fills the defaults in).
#[derive(Debug, Clone, clap::Args)]
pub struct TrainingArgs {
    /// What is trained [default: full].
    #[arg(long, value_name = "full|lora|qlora")]
    pub method: Option<Method>,
    /// LoRA rank [default: 8].
    #[arg(long = "lora-r", value_name = "R", value_parser = |s: &str| Bounded::new(1, 65_536, "a rank").parse(s))]
    pub lora_r: Option<u64>,
    /// Modules that get adapters: names (q_proj,v_proj) or all-linear (default: PEFT's for the
    /// model type).
    #[arg(long, value_name = "NAMES")]
    pub lora_targets: Option<Targets>,
    /// Weights' and compute's precision [default: mixed-bf16].
    #[arg(long, value_name = "fp32|bf16|fp16|mixed-bf16|mixed-fp16")]
    pub precision: Option<Precision>,
    /// How the frozen base is stored [default: none; nf4 with --method qlora].
    #[arg(long, value_name = "none|int8|nf4")]
    pub quant: Option<Quant>,
    /// Quantize the 4-bit block constants too (bitsandbytes' double quantization).
    #[arg(long)]
    pub double_quant: bool,
    /// Keep the unquantized parameters in the compute dtype (by default they are fp32, as PEFT's
    /// prepare_model_for_kbit_training casts them).
    #[arg(long)]
    pub no_kbit_upcast: bool,
    /// The optimizer [default: adamw].
    #[arg(
        long,
        value_name = "adamw|adamw-8bit|paged-adamw|sgd|sgd-momentum|adafactor"
    )]
    pub optimizer: Option<Optimizer>,
    /// Micro-batch per GPU [default: 1].
    #[arg(long, value_name = "N", value_parser = |s: &str| Bounded::new(1, MAX_BATCH, "a batch size").parse(s))]
    pub batch: Option<u64>,
    /// Context length in tokens [default: 2048].
    #[arg(long, value_name = "N", value_parser = |s: &str| Bounded::new(1, MAX_SEQ, "a context length").parse(s))]
    pub seq: Option<u64>,
    /// Gradient accumulation steps (gradients then live through the forward passes too)
    /// [default: 1].
    #[arg(long, value_name = "N", value_parser = |s: &str| Bounded::new(1, 65_536, "a step count").parse(s))]
    pub grad_accum: Option<u64>,
    /// Recompute activations in backward instead of keeping them.
    #[arg(long)]
    pub grad_checkpointing: bool,
    /// The attention kernel [default: sdpa].
    #[arg(long, value_name = "eager|sdpa|flash")]
    pub attention: Option<Attention>,
    /// GPUs the run is spread over [default: 1].
    #[arg(long, value_name = "N", value_parser = |s: &str| Bounded::new(1, 65_536, "a GPU count").parse(s))]
    pub gpus: Option<u64>,
    /// How model state is split over the GPUs [default: none].
    #[arg(long, value_name = "none|zero1|zero2|zero3|fsdp")]
    pub shard: Option<Shard>,
}

impl TrainingArgs {
    /// The flags as given.
    fn given(&self) -> Given {
        Given {
            method: self.method,
            lora_rank: self.lora_r,
            lora_targets: self.lora_targets.clone(),
            precision: self.precision,
            quant: self.quant,
            double_quant: self.double_quant,
            no_kbit_upcast: self.no_kbit_upcast,
            optimizer: self.optimizer,
            batch: self.batch,
            seq: self.seq,
            grad_accum: self.grad_accum,
            grad_checkpointing: self.grad_checkpointing,
            attention: self.attention,
            gpus: self.gpus,
            shard: self.shard,
        }
    }
}

/// Which GPUs to hold the estimate against.
#[derive(Debug, Clone, clap::Args)]
pub struct TargetArgs {
    /// GPUs by name, comma-separated: t4, l4, a10, 4090, 3090, a100-40, h100, a100-80 (default:
    /// all of them), each held to the total CUDA reports for it, not its sold size.
    #[arg(long, value_name = "NAMES", conflicts_with = "gpu_memory")]
    pub gpu: Option<String>,
    /// A GPU of this size instead (24GB, 80GiB).
    #[arg(long, value_name = "SIZE", value_parser = units::parse_bytes)]
    pub gpu_memory: Option<f64>,
    /// Percent of the GPU kept free for evaluation and caching [default: 10].
    #[arg(long, value_name = "PERCENT", value_parser = |s: &str| Bounded::new(0, 90, "a percentage").parse(s))]
    pub headroom: Option<u64>,
}

impl TargetArgs {
    /// The flags given, as typed.
    fn flags(&self) -> Vec<&'static str> {
        [
            ("--gpu", self.gpu.is_some()),
            ("--gpu-memory", self.gpu_memory.is_some()),
            ("--headroom", self.headroom.is_some()),
        ]
        .into_iter()
        .filter_map(|(flag, given)| given.then_some(flag))
        .collect()
    }
}

/// The flags of `--model crate::PATH`'s build, as typed, that were given.
fn build_flags(b: &super::check::BuildArgs) -> Vec<&'static str> {
    [
        ("--features", !b.features.is_empty()),
        ("--release", b.release),
        ("--debug", b.debug),
        ("--offline", b.offline),
        ("--manifest-path", b.manifest_path.is_some()),
        ("--package", b.package.is_some()),
    ]
    .into_iter()
    .filter_map(|(flag, given)| given.then_some(flag))
    .collect()
}

/// Refuses flags that the chosen model source would not read, naming them: a value given is
/// used or refused, never dropped.
fn refuse_unread(args: &Args) -> Result<()> {
    let crate_model = args
        .model
        .as_deref()
        .is_some_and(|m| !m.starts_with("zoo::"));
    let unread_build = if crate_model {
        Vec::new()
    } else {
        build_flags(&args.build)
    };
    if let Some(flag) = unread_build.first() {
        return Err(Error::usage(format!(
            "{flag} builds a model in your crate; it applies to --model crate::PATH only"
        )));
    }
    if let Some(model) = &args.model {
        let mut unread = args.training.given().flags();
        unread.extend(args.target.flags());
        if let Some(flag) = unread.first() {
            return Err(Error::usage(format!(
                "{flag} with --model {model}: a candle model is estimated as `check memory` trains \
                 it (its own batch, fp32, AdamW, no GPU targets); the training and GPU flags \
                 apply to --config, the shape flags and --params"
            )));
        }
    }
    Ok(())
}

pub fn run(args: Args, g: &Context) -> Result<Exit> {
    refuse_unread(&args)?;
    if let Some(model) = &args.model {
        return run_model(model, &args.build, g);
    }
    let (source, shape, guessed) = read_shape(&args)?;
    let setup = setup(&args.training)?;
    let estimate = estimate(&shape, &setup).map_err(Error::usage)?;
    let headroom = args
        .target
        .headroom
        .map_or(DEFAULT_HEADROOM, |p| p as f64 / 100.0);
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
        let text = read_config(path)?;
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
        let shape = guess_shape(count).map_err(Error::usage)?;
        return Ok((format!("--params {count}"), shape, true));
    }
    Err(Error::usage(
        "give the model: --config config.json, the shape (--layers --hidden --heads --vocab, \
         optionally --intermediate --kv-heads), or --params 7B for a rough answer",
    ))
}

/// A config.json, refused past [`config::MAX_CONFIG_BYTES`] before it is read whole.
fn read_config(path: &std::path::Path) -> Result<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| Error::input(path, "reading it", e))?;
    let mut bytes = Vec::new();
    file.take(config::MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::input(path, "reading it", e))?;
    if bytes.len() as u64 > config::MAX_CONFIG_BYTES {
        return Err(Error::input(
            path,
            "size",
            format!(
                "more than {} bytes; a config.json is a few kilobytes",
                config::MAX_CONFIG_BYTES
            ),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        Error::input(
            path,
            format!("byte {}", e.utf8_error().valid_up_to()),
            "not UTF-8 text",
        )
    })
}

fn setup(t: &TrainingArgs) -> Result<Setup> {
    t.given().resolve().map_err(Error::usage)
}

fn gpus(t: &TargetArgs) -> Result<Vec<Gpu>> {
    if let Some(bytes) = t.gpu_memory {
        return Ok(vec![Gpu {
            name: "--gpu-memory",
            bytes,
            reported: None,
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
            std::time::Duration::from_secs(mldebug_diagnostics::plan::DEFAULT_TIMEOUT_S),
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
