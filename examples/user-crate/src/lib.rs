//! A two-layer classifier, written the way candle's examples write models, plus the
//! `DebugModel` impl that lets `mldebug check` run its checks on it.

use candle_core::{Device, Result, Tensor};
use candle_nn::{linear, Linear, Module, VarBuilder};
use mldebug_diagnostics::{Batch, DebugModel};

/// Features per example.
pub const INPUTS: usize = 20;
/// Hidden units.
pub const HIDDEN: usize = 32;
/// Output classes.
pub const CLASSES: usize = 4;
/// Examples in the batch the checks train on.
pub const BATCH: usize = 16;

pub struct Net {
    fc1: Linear,
    fc2: Linear,
}

impl Net {
    pub fn new(vb: VarBuilder) -> Result<Net> {
        Ok(Net {
            fc1: linear(INPUTS, HIDDEN, vb.pp("fc1"))?,
            fc2: linear(HIDDEN, CLASSES, vb.pp("fc2"))?,
        })
    }
}

impl Module for Net {
    fn forward(&self, xs: &Tensor) -> Result<Tensor> {
        let hidden = self.fc1.forward(xs)?.relu()?;
        self.fc2.forward(&hidden)
    }
}

impl DebugModel for Net {
    fn build(vb: VarBuilder) -> Result<Self> {
        Net::new(vb)
    }

    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        // Seeded N(0, 1) inputs and balanced class ids; use real data here if you have it.
        mldebug_diagnostics::harness::classification_batch(&[BATCH, INPUTS], CLASSES, device, seed)
    }

    fn forward(&self, input: &Tensor, _train: bool) -> Result<Tensor> {
        Module::forward(self, input)
    }
    // `loss` and `task` keep their defaults: mean cross-entropy, classification.
}

#[cfg(test)]
mod tests {
    use super::Net;
    use mldebug_diagnostics::memory::measure::{measure, BatchLayout};
    use mldebug_diagnostics::{checks, Options};

    /// Counts allocations, so that memory is measured (as the `mldebug` binary does).
    #[global_allocator]
    static ALLOC: mldebug_diagnostics::memory::CountingAllocator =
        mldebug_diagnostics::memory::CountingAllocator;

    /// The checks as a library: the same verdict `mldebug check overfit` gives.
    #[test]
    fn net_can_overfit_one_batch() -> candle_core::Result<()> {
        checks::overfit::<Net>(&Options::default())?.assert_pass();
        Ok(())
    }

    /// `mldebug memory --model crate::Net` against the measurement of `check memory`, each
    /// stage of the last measured step, at three batch sizes (the batch repeated 1, 4, 16
    /// times): within 15% at every stage.
    #[test]
    fn the_memory_estimate_against_the_measurement() -> candle_core::Result<()> {
        for copies in [1, 4, 16] {
            let run = measure::<Net>(&Options::default(), BatchLayout { copies, seq: None })?;
            let last = run.measurement.steps.len() - 1;
            let measured = run.measurement.stages(last).expect("a measured step");
            let estimated = run.estimate.as_array();
            for (i, stage) in ["load", "forward", "backward", "optimizer step"]
                .iter()
                .enumerate()
            {
                let ratio = measured[i] / estimated[i];
                println!(
                    "x{copies} {stage}: measured {:.0} B, estimated {:.0} B, {ratio:.2}",
                    measured[i], estimated[i]
                );
                assert!((ratio - 1.0).abs() <= 0.15, "x{copies} {stage}: {ratio:.2}");
            }
        }
        Ok(())
    }
}
