//! The estimate of each stage against the measurement, on every clean zoo model and two models
//! of plain (untraced) candle_nn layers, at three batch sizes (the model's batch repeated 1, 4
//! and 16 times) and, for the language model, two sequence lengths (16 and 8 tokens). Prints
//! the table (`--nocapture`); asserts ±15% on every stage of every model.

use mldebug_diagnostics::memory::measure::{self, BatchLayout, Run};
use mldebug_diagnostics::zoo::batch_norm::{BnCnn, BnMlp};
use mldebug_diagnostics::zoo::cnn::{self, Cnn};
use mldebug_diagnostics::zoo::mlp::{self, Mlp};
use mldebug_diagnostics::zoo::tiny_gpt::{self, TinyGpt};
use mldebug_diagnostics::{Batch, DebugModel, Options};
use plain::{PlainCnn, PlainMlp};

#[global_allocator]
static ALLOC: mldebug_diagnostics::memory::CountingAllocator =
    mldebug_diagnostics::memory::CountingAllocator;

/// The bound held on every stage of every clean model.
const BOUND: f64 = 0.15;
const STAGES: [&str; 4] = ["load", "forward", "backward", "optimizer step"];
const COPIES: [usize; 3] = [1, 4, 16];

type Measure = fn(&Options, BatchLayout) -> candle_core::Result<Run>;

fn models() -> Vec<(&'static str, Measure, &'static [Option<usize>])> {
    vec![
        ("mlp", measure::measure::<Mlp<mlp::Clean>>, &[None]),
        ("cnn", measure::measure::<Cnn<cnn::Clean>>, &[None]),
        (
            "tiny-gpt",
            measure::measure::<TinyGpt<tiny_gpt::Clean>>,
            &[Some(16), Some(8)],
        ),
        ("mlp-batchnorm", measure::measure::<BnMlp<true>>, &[None]),
        (
            "mlp-batchnorm-no-affine",
            measure::measure::<BnMlp<false>>,
            &[None],
        ),
        ("cnn-batchnorm", measure::measure::<BnCnn<true>>, &[None]),
        ("plain-candle-mlp", measure::measure::<PlainMlp>, &[None]),
        ("plain-candle-cnn", measure::measure::<PlainCnn>, &[None]),
    ]
}

/// Models written with candle_nn's own layers, none traced, as most users write them: the
/// estimate must not depend on mldebug's traced layers.
mod plain {
    use super::{Batch, DebugModel};
    use candle_core::{Device, Module, Result, Tensor};
    use candle_nn::{conv2d, linear, Conv2d, Conv2dConfig, Linear, VarBuilder};

    /// 20 → 32 → 4, ReLU: `examples/user-crate`'s model.
    pub struct PlainMlp(Linear, Linear);

    impl DebugModel for PlainMlp {
        fn build(vb: VarBuilder) -> Result<Self> {
            Ok(PlainMlp(
                linear(20, 32, vb.pp("fc1"))?,
                linear(32, 4, vb.pp("fc2"))?,
            ))
        }
        fn batch(device: &Device, seed: u64) -> Result<Batch> {
            mldebug_diagnostics::harness::classification_batch(&[16, 20], 4, device, seed)
        }
        fn forward(&self, input: &Tensor, _train: bool) -> Result<Tensor> {
            self.1.forward(&self.0.forward(input)?.relu()?)
        }
    }

    /// Two 3×3 convolutions (1 → 8 → 16 channels) on 8×8 images, average pool, linear head.
    pub struct PlainCnn(Conv2d, Conv2d, Linear);

    impl DebugModel for PlainCnn {
        fn build(vb: VarBuilder) -> Result<Self> {
            let same = Conv2dConfig {
                padding: 1,
                ..Default::default()
            };
            Ok(PlainCnn(
                conv2d(1, 8, 3, same, vb.pp("conv1"))?,
                conv2d(8, 16, 3, same, vb.pp("conv2"))?,
                linear(16 * 2 * 2, 4, vb.pp("head"))?,
            ))
        }
        fn batch(device: &Device, seed: u64) -> Result<Batch> {
            mldebug_diagnostics::harness::classification_batch(&[32, 1, 8, 8], 4, device, seed)
        }
        fn forward(&self, input: &Tensor, _train: bool) -> Result<Tensor> {
            let x = self.0.forward(input)?.relu()?;
            let x = self.1.forward(&x)?.relu()?.avg_pool2d(4)?;
            self.2.forward(&x.flatten_from(1)?)
        }
    }
}

#[test]
fn estimates_against_measurements() {
    let opts = Options::default();
    let mut rows = vec![format!(
        "{:<25}{:>6}{:>5}  {}",
        "model",
        "batch",
        "seq",
        STAGES.map(|s| format!("{s:>30}")).join("")
    )];
    let mut outside = Vec::new();
    let mut doc_rows: Vec<String> = Vec::new();
    for (name, run, seqs) in models() {
        for &seq in seqs {
            let mut ratios = [[0.0; 3]; 4];
            for (c, copies) in COPIES.into_iter().enumerate() {
                let r = run(&opts, BatchLayout { copies, seq }).unwrap();
                let last = r.measurement.steps.len() - 1;
                let measured = r.measurement.stages(last).unwrap();
                let estimated = r.estimate.as_array();
                let mut cells = Vec::new();
                for (i, stage) in STAGES.iter().enumerate() {
                    let ratio = measured[i] / estimated[i];
                    ratios[i][c] = ratio;
                    cells.push(format!(
                        "{:>30}",
                        format!(
                            "{:.0}/{:.0} KB = {ratio:.2}",
                            measured[i] / 1e3,
                            estimated[i] / 1e3
                        )
                    ));
                    if (ratio - 1.0).abs() > BOUND {
                        outside.push(format!("{name} ×{copies} seq {seq:?} {stage}: {ratio:.2}"));
                    }
                }
                let seq_text = seq.map_or("—".to_string(), |s| s.to_string());
                rows.push(format!(
                    "{name:<25}{copies:>6}{seq_text:>5}  {}",
                    cells.join("")
                ));
            }
            let cell = |r: [f64; 3]| r.map(|x| format!("{x:.2}")).join(" / ");
            doc_rows.push(format!(
                "| {name} | 1 / 4 / 16 | {} | {} |",
                seq.map_or("—".to_string(), |s| s.to_string()),
                ratios.map(cell).join(" | ")
            ));
        }
    }
    println!(
        "measured / estimated per stage (step 4):\n{}",
        rows.join("\n")
    );
    println!("outside the bounds: {outside:#?}");
    println!("refs/memory.md rows:\n{}", doc_rows.join("\n"));
    assert!(outside.is_empty(), "outside the bounds: {outside:#?}");
    // refs/memory.md prints this table; its rows must be what this test measures.
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../refs/memory.md"),
    )
    .unwrap();
    for row in &doc_rows {
        assert!(
            doc.contains(row.as_str()),
            "refs/memory.md lacks the measured row\n{row}"
        );
    }
}
