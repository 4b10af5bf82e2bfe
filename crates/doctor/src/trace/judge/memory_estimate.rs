//! `mldebug memory`'s estimate beside `memory-stages`' measured figures, for a model whose
//! `model` record carries a transformers config of a family `mldebug_memory::config` reads.
//!
//! The setup is the run's own: batch and sequence length of its first training forward, the
//! parameters' dtype, full fine-tuning or LoRA (from the trainable count, the LoRA layers and the
//! adapter's rank and targets), the optimizer (Adam and AdamW alike, SGD with or without
//! momentum, Adafactor, 8-bit and paged AdamW), the attention kernel, activation checkpointing,
//! the backward calls per step (accumulation) and FSDP over the ranks. A config the reader
//! refuses, a family it does not read or a setup it does not model gives one line saying why,
//! and no numbers. The estimate is context, never a judgement: nothing here sets a severity.
//!
//! The estimate is of a steady-state step (the optimizer's state exists), so the stages are
//! compared with the last step reported (step 2): the peak so far at each stage's end, which is
//! the stage's own peak when the stage raised it and otherwise only an upper bound ("at most");
//! load with what was held before the first forward. On CUDA both sides count tensors
//! (`max_memory_allocated`; the CUDA context and the allocator's reserve are in neither); on
//! CPU the measured side is the process's resident set, and the comparison is rough.

use crate::trace::read::Process;
use crate::trace::records::Model;
use mldebug_memory::config;
use mldebug_memory::estimate::{estimate, Estimate, Stage};
use mldebug_memory::fit::{MAX_BATCH, MAX_SEQ};
use mldebug_memory::setup::{
    Attention, Method, Optimizer, Precision, Quant, Setup, Shard, Targets,
};
use mldebug_text::number::num;
use serde_json::Value;
use std::path::Path;

/// Bytes in a MiB (also the estimate's and the tests' unit).
pub(super) const MIB: f64 = 1024.0 * 1024.0;

/// The longest name from a trace (a model type, an optimizer's class) quoted in a line: any
/// real one is far shorter, and a longer one is cut rather than repeated whole.
const MAX_NAME_CHARS: usize = 64;

/// The largest LoRA rank estimated: the bound `mldebug memory --lora-r` accepts.
const MAX_LORA_RANK: u64 = 65_536;

/// The share by which the config's parameter count may differ from the model's before a line
/// says so: a few percent is a task head or an untied copy; more means the config does not
/// describe the model that trained.
const PARAMS_MISMATCH: f64 = 0.05;

/// How the config is named in a reader's error.
const CONFIG_PLACE: &str = "the model record's config";

/// The stages compared, with the finding's number names: estimate, measured, ratio.
const ROWS: [(&str, [&str; 3]); 5] = [
    (
        "load",
        ["estimate_load_bytes", "measured_load_bytes", "ratio_load"],
    ),
    (
        "forward",
        [
            "estimate_forward_bytes",
            "measured_forward_bytes",
            "ratio_forward",
        ],
    ),
    (
        "backward",
        [
            "estimate_backward_bytes",
            "measured_backward_bytes",
            "ratio_backward",
        ],
    ),
    (
        "optimizer step",
        [
            "estimate_optimizer_step_bytes",
            "measured_optimizer_step_bytes",
            "ratio_optimizer_step",
        ],
    ),
    (
        "peak",
        ["estimate_peak_bytes", "measured_peak_bytes", "ratio_peak"],
    ),
];

/// A measured figure: bytes, and whether it is the stage's own peak (else an upper bound).
#[derive(Debug, Clone, Copy)]
pub(super) struct Figure {
    pub bytes: f64,
    pub own: bool,
}

/// What `memory-stages` measured, in the terms of the estimate.
#[derive(Debug, Clone)]
pub(super) struct Measured {
    /// Allocator readings (else the resident set).
    pub cuda: bool,
    /// The step the stage figures come from.
    pub step: u64,
    /// Held before the first forward.
    pub load: Option<f64>,
    /// The peak so far at the end of forward, backward and optimizer step.
    pub stages: [Option<Figure>; 3],
    /// The peak so far at the end of that step.
    pub peak: Option<f64>,
}

/// What goes into the finding: a clause for its summary, detail lines and numbers.
#[derive(Debug, Clone, Default)]
pub(super) struct Beside {
    pub summary: Option<String>,
    pub details: Vec<String>,
    pub numbers: Vec<(&'static str, f64)>,
}

/// The estimate beside `m`, or `None` when no model of the process has a config (the finding
/// is then as it was).
pub(super) fn beside(p: &Process, m: &Measured) -> Option<Beside> {
    let model = p.models.iter().find(|x| x.config.is_some())?;
    Some(match plan(p, model) {
        Ok(plan) => compare(&plan, m),
        Err(why) => Beside {
            details: vec![format!("mldebug memory's estimate: not estimated: {why}")],
            ..Beside::default()
        },
    })
}

/// The setup and its estimate, with the assumptions worth a line.
struct Plan {
    setup: Setup,
    estimate: Estimate,
    notes: Vec<String>,
}

/// A name from the trace, bounded and with control characters escaped.
fn name(s: &str) -> String {
    let cut: String = s.chars().take(MAX_NAME_CHARS).collect();
    let more = if cut.len() < s.len() { "…" } else { "" };
    format!("{}{more}", cut.escape_debug())
}

fn plan(p: &Process, model: &Model) -> Result<Plan, String> {
    let cfg = model.config.as_ref().ok_or("no config")?;
    let model_type = cfg
        .get("model_type")
        .and_then(Value::as_str)
        .ok_or("its config names no model_type")?;
    if !config::SUPPORTED.contains(&model_type) {
        return Err(format!(
            "model_type `{}` is not a family mldebug memory reads ({})",
            name(model_type),
            config::SUPPORTED.join(", ")
        ));
    }
    let shape = config::parse(Path::new(CONFIG_PLACE), &cfg.to_string())
        .map_err(|e| format!("mldebug memory does not read its config: {e}"))?;
    let (batch, seq, autocast) = input(p, model)?;
    let precision = precision(model.dtype.as_deref())?;
    let (method, lora_rank, lora_targets) = method(model)?;
    let mut notes = Vec::new();
    let attention = attention(model.attn_implementation.as_deref(), &mut notes);
    let (gpus, shard) = sharding(p, model);
    let setup = Setup {
        method,
        lora_rank,
        lora_targets,
        precision,
        quant: Quant::None,
        double_quant: false,
        kbit_upcast: true,
        optimizer: optimizer(p)?,
        batch,
        seq,
        grad_accum: p
            .steps
            .iter()
            .find(|s| s.optimizer == 0)
            .map_or(1, |s| s.backwards.max(1)),
        grad_checkpointing: model.gradient_checkpointing.unwrap_or(false),
        attention,
        gpus,
        shard,
    }
    .validate()?;
    let estimate = estimate(&shape, &setup)?;
    if let (Some(a), Precision::Fp32) = (autocast, precision) {
        notes.push(format!(
            "the forward ran under autocast to {}: the estimate counts activations and logits \
             in float32, autocast keeps most in 16 bits, so expect the measured forward and \
             backward below it",
            name(a)
        ));
    }
    notes.extend(params_note(model, &setup, &estimate));
    Ok(Plan {
        setup,
        estimate,
        notes,
    })
}

/// (batch, sequence length, autocast dtype) of the model's first training forward.
fn input<'a>(p: &'a Process, model: &Model) -> Result<(u64, u64, Option<&'a str>), String> {
    let i = p
        .steps
        .iter()
        .filter(|s| s.optimizer == 0)
        .filter_map(|s| s.input.as_ref())
        .find(|i| i.model == model.model)
        .ok_or("the trace holds no training forward's input for it")?;
    let (batch, seq) = match i.shape[..] {
        [b, s, ..] => (b, s),
        _ => {
            return Err(format!(
                "its first training forward's input ({}) has shape {:?}, not batch × sequence",
                name(i.argument.as_deref().unwrap_or("?")),
                i.shape
            ))
        }
    };
    if !(1..=MAX_BATCH).contains(&batch) || !(1..=MAX_SEQ).contains(&seq) {
        return Err(format!(
            "batch {batch} × sequence {seq} is outside what mldebug memory estimates \
             (1 to {MAX_BATCH} × 1 to {MAX_SEQ})"
        ));
    }
    Ok((batch, seq, i.autocast.as_deref()))
}

fn precision(dtype: Option<&str>) -> Result<Precision, String> {
    match dtype {
        Some("float32") => Ok(Precision::Fp32),
        Some("bfloat16") => Ok(Precision::Bf16),
        Some("float16") => Ok(Precision::Fp16),
        Some(other) => Err(format!(
            "its parameters are {}, a storage mldebug memory does not model from a trace \
             (float32, bfloat16, float16)",
            name(other)
        )),
        None => Err("the trace does not say its parameters' dtype".into()),
    }
}

fn optimizer(p: &Process) -> Result<Optimizer, String> {
    let o = p
        .optimizers
        .iter()
        .find(|o| o.optimizer == 0)
        .ok_or("the trace holds no optimizer")?;
    match o.class.as_str() {
        "Adam" | "AdamW" => Ok(Optimizer::AdamW),
        "SGD" => match o.groups.first().and_then(|g| g.momentum) {
            Some(m) if m > 0.0 => Ok(Optimizer::SgdMomentum),
            Some(_) => Ok(Optimizer::Sgd),
            None => Err("the trace does not say SGD's momentum".into()),
        },
        "Adafactor" => Ok(Optimizer::Adafactor),
        "AdamW8bit" => Ok(Optimizer::AdamW8bit),
        "PagedAdamW" => Ok(Optimizer::PagedAdamW),
        other => Err(format!(
            "optimizer {} is not one mldebug memory models (Adam, AdamW, SGD, Adafactor, \
             AdamW8bit, PagedAdamW)",
            name(other)
        )),
    }
}

/// Full fine-tuning, or LoRA with its rank and targets.
fn method(model: &Model) -> Result<(Method, u64, Targets), String> {
    let d = Setup::default();
    if model.lora == 0 {
        if model.trainable == model.parameters {
            return Ok((Method::Full, d.lora_rank, d.lora_targets));
        }
        return Err(format!(
            "{} of its {} parameters are trainable without LoRA layers: mldebug memory \
             estimates full fine-tuning or LoRA",
            model.trainable, model.parameters
        ));
    }
    let rank = model
        .lora_rank
        .filter(|r| (1..=MAX_LORA_RANK).contains(r))
        .ok_or("the trace does not say the LoRA rank (or it is outside 1 to 65536)")?;
    let targets = match &model.lora_targets {
        None | Some(Value::Null) => Targets::Default,
        Some(Value::String(s)) if s == "all-linear" => Targets::AllLinear,
        Some(Value::Array(items)) => {
            let names: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
            names
                .ok_or("its LoRA targets are not module names")?
                .join(",")
                .parse::<Targets>()?
        }
        Some(other) => {
            return Err(format!(
                "its LoRA targets are the pattern {}, not module names",
                name(&other.to_string())
            ))
        }
    };
    Ok((Method::Lora, rank, targets))
}

fn attention(kernel: Option<&str>, notes: &mut Vec<String>) -> Attention {
    match kernel {
        Some("eager") => Attention::Eager,
        Some("sdpa") => Attention::Sdpa,
        Some(k) if k.starts_with("flash") => Attention::Flash,
        other => {
            notes.push(format!(
                "attention kernel {}: estimated as sdpa (no score matrix kept)",
                other.map_or("unknown".into(), name)
            ));
            Attention::Sdpa
        }
    }
}

/// FSDP over the ranks; DDP and a single process hold everything on each.
fn sharding(p: &Process, model: &Model) -> (u64, Shard) {
    let world = u64::from(p.start.world_size.unwrap_or(1));
    match model.wrapper.as_deref() {
        Some("FullyShardedDataParallel") if world >= 2 => (world, Shard::Fsdp),
        _ => (1, Shard::None),
    }
}

/// A line when the config's shape counts other parameters than the model holds.
fn params_note(model: &Model, setup: &Setup, e: &Estimate) -> Option<String> {
    let base = if setup.adapters() {
        model.parameters.saturating_sub(model.trainable)
    } else {
        model.parameters
    };
    let (est, got) = (e.params.total as f64, base as f64);
    ((est - got).abs() > PARAMS_MISMATCH * got.max(1.0)).then(|| {
        format!(
            "the config's shape counts {} parameters, the model holds {}: the estimate is of \
             the config's shape",
            mldebug_text::number::grouped(e.params.total),
            mldebug_text::number::grouped(base)
        )
    })
}

/// The flags of `mldebug memory` that give the same setup.
fn flags(s: &Setup) -> String {
    let mut f = format!(
        "--batch {} --seq {} --precision {} --optimizer {} --attention {}",
        s.batch, s.seq, s.precision, s.optimizer, s.attention
    );
    if s.method == Method::Lora {
        f.push_str(&format!(" --method lora --lora-r {}", s.lora_rank));
        match &s.lora_targets {
            Targets::Default => {}
            Targets::AllLinear => f.push_str(" --lora-targets all-linear"),
            Targets::Names(n) => f.push_str(&format!(" --lora-targets {}", n.join(","))),
        }
    }
    if s.grad_checkpointing {
        f.push_str(" --grad-checkpointing");
    }
    if s.grad_accum > 1 {
        f.push_str(&format!(" --grad-accum {}", s.grad_accum));
    }
    if s.shard != Shard::None {
        f.push_str(&format!(" --gpus {} --shard {}", s.gpus, s.shard));
    }
    f
}

fn compare(plan: &Plan, m: &Measured) -> Beside {
    let e = &plan.estimate;
    let stage = |s: Stage| {
        e.stages
            .iter()
            .find(|x| x.stage == s)
            .map_or(f64::NAN, |x| x.bytes)
    };
    let own = |bytes: Option<f64>| bytes.map(|bytes| Figure { bytes, own: true });
    // In ROWS' order: load, the three stages, the peak.
    let rows: [(f64, Option<Figure>); 5] = [
        (stage(Stage::Load), own(m.load)),
        (stage(Stage::Forward), m.stages[0]),
        (stage(Stage::Backward), m.stages[1]),
        (stage(Stage::OptimizerStep), m.stages[2]),
        (e.peak, own(m.peak)),
    ];
    let device = if m.cuda {
        "on CUDA the measured figures are the allocator's (max_memory_allocated; \
         memory_allocated for load): tensors, as the estimate counts them"
    } else {
        "on CPU the measured figures are the process's resident set (the interpreter, the \
         libraries and the allocator's caches besides the tensors): the comparison is rough"
    };
    let mut numbers = Vec::new();
    let mut parts = Vec::new();
    for ((label, keys), (est, fig)) in ROWS.iter().zip(rows) {
        let ratio = fig.map_or(f64::NAN, |f| f.bytes / est);
        parts.push(pair(label, fig, est, ratio));
        numbers.push((keys[0], est));
        numbers.push((keys[1], fig.map_or(f64::NAN, |f| f.bytes)));
        numbers.push((keys[2], ratio));
    }
    // Few lines: the finding holds at most MAX_DETAILS, and the measured stages come first.
    let mut details = vec![
        format!(
            "mldebug memory's estimate of a steady-state step of this run (`mldebug memory \
             --config <its config.json> {}`), measured / estimated; {device}",
            flags(&plan.setup)
        ),
        format!(
            "step {}, the peak by each stage's end (at most: the stage stayed below an earlier \
             peak): {}",
            m.step,
            parts[1..4].join(", ")
        ),
        format!(
            "{} (held before the first forward); {} (by the end of step {})",
            parts[0], parts[4], m.step
        ),
    ];
    if !plan.notes.is_empty() {
        details.push(format!("assumed: {}", plan.notes.join("; ")));
    }
    let measured = m.peak.map_or(String::new(), |p| {
        let rough = if m.cuda { "" } else { ", rough on CPU" };
        format!(" (measured {}{rough})", mib(p))
    });
    Beside {
        summary: Some(format!(
            "; mldebug memory estimates its peak at {}{measured}",
            mib(e.peak)
        )),
        details,
        numbers,
    }
}

/// `forward 755.9 / 2.4 MiB ×316`: measured / estimated and their ratio.
fn pair(label: &str, fig: Option<Figure>, est: f64, ratio: f64) -> String {
    let est = est / MIB;
    match fig {
        Some(f) if f.own => format!(
            "{label} {:.1} / {est:.1} MiB ×{}",
            f.bytes / MIB,
            num(ratio)
        ),
        Some(f) => format!(
            "{label} at most {:.1} / {est:.1} MiB ×{} at most",
            f.bytes / MIB,
            num(ratio)
        ),
        None => format!("{label} unknown / {est:.1} MiB"),
    }
}

fn mib(x: f64) -> String {
    format!("{:.1} MiB", x / MIB)
}
