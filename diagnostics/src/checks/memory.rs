//! `memory`: where a training step's memory goes, measured per stage for steps 1 to 4, and
//! whether it leaks, spikes or materialises what it need not.
//!
//! On CPU it needs the counting allocator ([`crate::memory::alloc`]) as the process's global
//! allocator: the `mldebug` binary and every generated harness install it; elsewhere the check
//! is `skipped`. On CUDA (a build with `--features cuda`) it reads the device's memory pool
//! ([`crate::memory::meter`]), which counts bytes in use but not single allocations: the
//! avoidable-intermediate rule reads the largest allocation of the same forward pass on CPU
//! (without the counting allocator that rule is left out). On another device it is `skipped`.
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
use crate::memory::{measure, meter};
use crate::model::DebugModel;
use crate::options::Options;
use crate::report::{CheckId, Finding};
use candle_core::Result;
use mldebug_judge::memory::{judge, Measurement};

const ID: CheckId = CheckId::Memory;

/// Measures fresh `M` for [`measure::STEPS`] steps on its own batch and judges it.
pub fn memory<M: DebugModel>(opts: &Options) -> Result<Finding> {
    if let Err(why) = meter::for_device(&opts.device)? {
        return Ok(skipped(ID, why));
    }
    let run = measure::measure::<M>(opts, measure::BatchLayout::default())?;
    let m = Measurement {
        run: run.measurement,
        estimate: Some(run.estimate),
        graph_bytes: Some(run.graph.bytes as f64),
    };
    Ok(judge(&m, &opts.ctx(M::task())))
}
