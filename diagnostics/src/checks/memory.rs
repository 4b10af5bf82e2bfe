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

use super::skipped;
use crate::memory::{alloc, measure};
use crate::model::DebugModel;
use crate::options::Options;
use crate::report::{CheckId, Finding};
use candle_core::{Device, Result};
use mldebug_judge::memory::{judge, Measurement};

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
    let m = Measurement {
        run: run.measurement,
        estimate: Some(run.estimate),
        graph_bytes: Some(run.graph.bytes as f64),
    };
    Ok(judge(&m, &opts.ctx(M::task())))
}
