//! The `mldebug memory` report: the components, the stage peaks, each GPU target, the levers.

use super::style::Style;
use super::terminal::escape;
use comfy_table::Cell;
use mldebug_diagnostics::Status;
use mldebug_memory::report::{MemoryReport, ModelMemory};
use mldebug_memory::units::gpu_memory;
use mldebug_text::number::{human_bytes, human_count};

pub fn render(r: &MemoryReport, style: &Style) -> String {
    let mut out = String::new();
    out.push_str(&heading(r));
    out.push('\n');
    out.push_str(&components(r, style));
    out.push_str("\n\n");
    out.push_str(&stages(r, style));
    out.push_str("\n\n");
    let e = &r.estimate;
    out.push_str(&format!(
        "peak {} allocated · {} reserved · {} on the GPU with the CUDA context\n\n",
        human_bytes(e.peak),
        human_bytes(e.reserved),
        human_bytes(e.on_device)
    ));
    out.push_str(&targets(r, style));
    out.push('\n');
    if !r.levers.is_empty() {
        out.push('\n');
        out.push_str(&levers(r, style));
        out.push('\n');
    }
    out.push_str("\nassumptions:\n");
    for a in &r.assumptions {
        out.push_str(&format!("  - {}\n", escape(&a.to_string())));
    }
    out
}

/// `--model zoo::<name>`: the counts, the estimate of each stage, the largest layer outputs.
pub fn render_model(r: &ModelMemory, style: &Style) -> String {
    let e = &r.estimate;
    let mut out = format!(
        "{}: {} values ({} trainable), {} bytes each; batch {}\n\n",
        escape(&r.model),
        human_count(e.values),
        human_count(e.trainable),
        e.value_bytes,
        e.batch
    );
    let mut table = style.table();
    table.set_header(["stage", "estimated peak"]);
    let s = &e.estimate;
    for (stage, bytes) in [
        ("load", s.load),
        ("forward", s.forward),
        ("backward", s.backward),
        ("optimizer step", s.optimizer_step),
    ] {
        table.add_row(vec![Cell::new(stage), Cell::new(human_bytes(bytes))]);
    }
    out.push_str(&table.trim_fmt());
    if !e.modules.is_empty() {
        out.push_str("\n\nlargest layer outputs (one forward pass):\n");
        for m in e.modules.iter().take(5) {
            out.push_str(&format!(
                "  {:<24} {:<10} {}\n",
                escape(&m.module),
                escape(&m.kind.to_string()),
                human_bytes(m.bytes)
            ));
        }
    } else {
        out.push_str(
            "\n\nno layer of this model is traced (plain candle layers), so its largest layer \
             outputs are not listed: mldebug_diagnostics::nn's layers name them\n",
        );
    }
    out.push_str(&format!(
        "\nfrom the model's own autograd graph, AdamW in fp32; measure it: mldebug check memory --model {}\n",
        escape(&r.model)
    ));
    out
}

fn heading(r: &MemoryReport) -> String {
    let s = &r.setup;
    let e = &r.estimate;
    let adapters = if s.adapters() {
        format!(" · rank {}", s.lora_rank)
    } else {
        String::new()
    };
    let quant = match s.quant {
        mldebug_memory::setup::Quant::None => String::new(),
        q => format!(
            " · {q}{}",
            if s.double_quant {
                " (double quant)"
            } else {
                ""
            }
        ),
    };
    format!(
        "{} ({}): {} parameters, {} trainable\n{}{adapters}{quant} · {} · {} · batch {} × {} tokens{} · {} attention{}{}\n",
        escape(&r.source.to_string()),
        escape(r.shape.family.model_type()),
        human_count(e.params.total),
        human_count(e.trainable),
        s.method,
        s.precision,
        s.optimizer,
        s.batch,
        s.seq,
        if s.grad_accum > 1 {
            format!(" (accumulating {})", s.grad_accum)
        } else {
            String::new()
        },
        s.attention,
        if s.grad_checkpointing { " · checkpointing" } else { "" },
        if s.gpus > 1 {
            format!(" · {} GPUs, {}", s.gpus, s.shard)
        } else {
            String::new()
        },
    )
}

fn components(r: &MemoryReport, style: &Style) -> String {
    let mut table = style.table();
    table.set_header(["component", "bytes", "how"]);
    for c in &r.estimate.components {
        table.add_row(vec![
            style.cell(&c.name),
            Cell::new(human_bytes(c.bytes)),
            style.cell(&c.how),
        ]);
    }
    table.trim_fmt()
}

fn stages(r: &MemoryReport, style: &Style) -> String {
    let mut table = style.table();
    table.set_header(["stage", "peak", "what is alive"]);
    for s in &r.estimate.stages {
        table.add_row(vec![
            Cell::new(s.stage.as_str()),
            Cell::new(human_bytes(s.bytes)),
            style.cell(&s.holds),
        ]);
    }
    table.trim_fmt()
}

fn targets(r: &MemoryReport, style: &Style) -> String {
    let mut table = style.table();
    table.set_header([
        "GPU (sold as)",
        "memory",
        "fits",
        "left",
        "largest batch",
        "longest context",
    ]);
    for t in &r.targets {
        let (status, word) = if t.fits {
            (Status::Pass, "yes")
        } else {
            (Status::Fail, "no")
        };
        let limit = |n: u64| {
            if n == 0 {
                "none".to_string()
            } else {
                n.to_string()
            }
        };
        let gpu = match &t.reported {
            Some(r) => format!("{} ({} GB)", t.gpu, r.sold_gb),
            None => t.gpu.clone(),
        };
        table.add_row(vec![
            Cell::new(gpu),
            Cell::new(gpu_memory(t.memory)),
            style.status_cell(status, word),
            Cell::new(gpu_memory(t.left)),
            Cell::new(limit(t.max_batch)),
            Cell::new(limit(t.max_seq)),
        ]);
    }
    let totals = if r.targets.iter().any(|t| t.reported.is_some()) {
        "memory = the total CUDA reports for the card, less than it is sold with (sources: \
         refs/memory.md, --json); left = what remains of it; both in GiB (2^30 bytes)\n"
    } else {
        ""
    };
    format!(
        "{}\n{totals}fits = needs at most {:.0}% of the GPU ({:.0}% kept free for evaluation and \
         caching); largest batch at {} tokens, longest context at batch {}",
        table.trim_fmt(),
        100.0 * (1.0 - r.headroom),
        100.0 * r.headroom,
        r.setup.seq,
        r.setup.batch
    )
}

fn levers(r: &MemoryReport, style: &Style) -> String {
    let mut table = style.table();
    table.set_header(["lever", "saves", "peak after", "flags"]);
    for l in &r.levers {
        table.add_row(vec![
            Cell::new(&l.lever),
            Cell::new(human_bytes(l.saves)),
            Cell::new(human_bytes(l.peak_after)),
            Cell::new(&l.flags),
        ]);
    }
    table.trim_fmt()
}
