//! The measured anchor of refs/memory.md: TinyLlama-1.1B QLoRA (batch 1, context 1200, rank 16
//! on q and v, 4-bit NF4 without double quantization, unquantized parameters in fp32) peaked
//! at 6.42 GB allocated and 7.09 GB reserved. The estimate under SDPA and eager attention, side
//! by side with it.

use mldebug_memory::config;
use mldebug_memory::estimate::{estimate, Estimate};
use mldebug_memory::setup::{Attention, Method, Quant, Setup, Targets};
use std::path::Path;

/// The measurement (refs/memory.md).
pub const MEASURED_ALLOCATED: f64 = 6.42e9;
pub const MEASURED_RESERVED: f64 = 7.09e9;

fn tinyllama_qlora(attention: Attention) -> Estimate {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/configs/tinyllama-1.1b.json");
    let shape = config::parse(&path, &std::fs::read_to_string(&path).unwrap()).unwrap();
    let setup = Setup {
        method: Method::Qlora,
        quant: Quant::Nf4,
        double_quant: false,
        kbit_upcast: true,
        lora_rank: 16,
        lora_targets: Targets::Names(vec!["q_proj".into(), "v_proj".into()]),
        batch: 1,
        seq: 1200,
        attention,
        ..Setup::default()
    };
    estimate(&shape, &setup.validate().unwrap()).unwrap()
}

#[test]
fn tinyllama_qlora_estimates_beside_the_measurement() {
    let sdpa = tinyllama_qlora(Attention::Sdpa);
    let eager = tinyllama_qlora(Attention::Eager);
    for (name, e) in [("sdpa", &sdpa), ("eager", &eager)] {
        println!("{name}: peak {:.3e} reserved {:.3e}", e.peak, e.reserved);
        for c in &e.components {
            println!("  {:<40} {:>14.0}  {}", c.name, c.bytes, c.how);
        }
        for s in &e.stages {
            println!("  {:<16} {:>14.0}", s.stage.as_str(), s.bytes);
        }
    }
    // Eager attention keeps every layer's probabilities: far above what was measured, so the
    // measured run did not store them (the conclusion refs/memory.md draws by hand).
    assert!(eager.peak > 1.3 * MEASURED_ALLOCATED);
    // SDPA: below the measurement (what is not modelled: dequantisation buffers, allocator
    // workspace), within 20% of it.
    assert!(sdpa.peak < MEASURED_ALLOCATED);
    assert!(sdpa.peak > 0.8 * MEASURED_ALLOCATED, "{}", sdpa.peak);
    assert!((sdpa.reserved / MEASURED_RESERVED - 1.0).abs() < 0.2);

    // refs/memory.md prints these numbers; they are recomputed here.
    let doc = refs_memory();
    let gb = |b: f64| format!("{:.2} GB", b / 1e9);
    says(
        &doc,
        &format!(
            "| estimate, SDPA (no score matrix kept) | {} | {} |",
            gb(sdpa.peak),
            gb(sdpa.reserved)
        ),
    );
    says(
        &doc,
        &format!(
            "| estimate, eager (probabilities kept in fp32) | {} | {} |",
            gb(eager.peak),
            gb(eager.reserved)
        ),
    );
    says(&doc, "| measured | 6.42 GB | 7.09 GB |");
    // The README shows the same table.
    let readme = read_flat("../../README.md");
    for row in [
        format!(
            "| estimate, SDPA (no score matrix kept) | {} | {} |",
            gb(sdpa.peak),
            gb(sdpa.reserved)
        ),
        format!(
            "| estimate, eager (probabilities kept in fp32) | {} | {} |",
            gb(eager.peak),
            gb(eager.reserved)
        ),
        "| measured | 6.42 GB | 7.09 GB |".to_string(),
    ] {
        assert!(readme.contains(&row), "README.md should say `{row}`");
    }
    says(
        &doc,
        &format!(
            "The SDPA estimate is {:.0}% of the measurement",
            100.0 * sdpa.peak / MEASURED_ALLOCATED
        ),
    );
    says(
        &doc,
        &format!(
            "The eager estimate is {:.2} times the measurement",
            eager.peak / MEASURED_ALLOCATED
        ),
    );
    let values = mldebug_memory::activations::values_per_token(&tinyllama_shape(), Attention::Sdpa);
    says(
        &doc,
        &format!(
            "keeps {} values per layer and token",
            grouped(values as u64)
        ),
    );
}

fn tinyllama_shape() -> mldebug_memory::Shape {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/configs/tinyllama-1.1b.json");
    config::parse(&path, &std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn refs_memory() -> String {
    read_flat("../../refs/memory.md")
}

/// A file of the repository with its whitespace runs made single spaces.
fn read_flat(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    let text = std::fs::read_to_string(path).unwrap();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn says(doc: &str, what: &str) {
    assert!(
        doc.contains(what),
        "refs/memory.md should say `{what}` (recomputed here)"
    );
}

fn grouped(n: u64) -> String {
    mldebug_text::number::grouped(n)
}
