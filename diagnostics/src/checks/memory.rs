//! `memory`: where a training step's memory goes, measured per stage for steps 1 to 4, and
//! whether it leaks, spikes or materialises what it need not.
//!
//! Needs the counting allocator ([`crate::memory::alloc`]) as the process's global allocator:
//! the `mldebug` binary and every generated harness install it; elsewhere the check is
//! `skipped`. Measures on CPU; on another device it is `skipped` (the same judgement will read a
//! GPU pool's high-water mark once it is measured).
//!
//! The verdict is `mldebug_memory::judge`'s: fail when what stays alive across steps grows at
//! every step after step 2 (a leak) or when forward makes one allocation many times any traced
//! layer's output (an avoidable intermediate); warn on a second-batch spike beyond the
//! optimizer state. The ratio measured ÷ estimated of each stage is in the metrics.
//!
//! On `zoo::tiny-gpt-activation-cache`:
//! ```text
//! memory  fail  memory keeps growing after step 2: +… a step; something keeps tensors alive
//!               from one step into the next
//! ```
//! Read: find what holds tensors across steps (a cache, a list of losses kept with their graph;
//! store `loss.to_scalar()` or detached copies instead).

use super::{next_for, skipped};
use crate::memory::{alloc, measure};
use crate::model::DebugModel;
use crate::options::Options;
use crate::report::{CheckId, Finding, Series};
use candle_core::{Device, Result};
use mldebug_memory::judge::judge;
use mldebug_memory::measured::Measurement;

const ID: CheckId = CheckId::Memory;

/// Measures fresh `M` for [`measure::STEPS`] steps on its own batch and judges it.
pub fn memory<M: DebugModel>(opts: &Options) -> Result<Finding> {
    if !alloc::installed() {
        return Ok(skipped(
            ID,
            "no counting allocator in this process: install mldebug_diagnostics::memory::CountingAllocator as the #[global_allocator] (the mldebug binary and its harnesses do)",
        ));
    }
    if !matches!(opts.device, Device::Cpu) {
        return Ok(skipped(
            ID,
            "memory is measured on CPU only for now; rerun with --device cpu",
        ));
    }
    let run = measure::measure::<M>(opts, measure::BatchLayout::default())?;
    let v = judge(&run.measurement, Some(&run.estimate));
    let mut f = Finding::new(ID, v.status, v.summary).next(next_for(ID, v.status, opts));
    for (k, x) in v.metrics {
        f = f.metric(&k, x);
    }
    f = f.metric("graph_bytes", run.graph.bytes as f64);
    f.details = v.details;
    f.series = series(&run.measurement);
    Ok(f)
}

/// The memory timeline (bytes at each stage of each step) and the layer outputs, for `--plot`.
fn series(m: &Measurement) -> Vec<Series> {
    let mut timeline = vec![[0.0, m.load]];
    for (i, s) in m.steps.iter().enumerate() {
        let x = (i + 1) as f64;
        timeline.extend([
            [x, s.forward],
            [x + 0.25, s.backward],
            [x + 0.5, s.optimizer_step],
            [x + 0.75, s.end],
        ]);
    }
    let mut out = vec![Series {
        name: "timeline".into(),
        x_label: "step (+0 forward, +0.25 backward, +0.5 optimizer step, +0.75 after)".into(),
        y_label: "bytes".into(),
        points: timeline,
        labels: Vec::new(),
    }];
    if !m.modules.is_empty() {
        out.push(Series {
            name: "layer_outputs".into(),
            x_label: "layer".into(),
            y_label: "output bytes".into(),
            points: m
                .modules
                .iter()
                .enumerate()
                .map(|(i, x)| [i as f64, x.bytes])
                .collect(),
            labels: m.modules.iter().map(|x| x.module.clone()).collect(),
        });
    }
    out
}
