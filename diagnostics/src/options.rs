//! How a check runs: where, in what precision, from which seed, for how long.

use candle_core::{DType, Device};

#[derive(Debug, Clone)]
pub struct Options {
    pub device: Device,
    pub dtype: DType,
    /// Seeds both the parameter init and the batch (`DebugModel::batch`).
    pub seed: u64,
    /// Optimizer steps for the checks that train (overfit).
    pub steps: usize,
    /// Learning rate for the checks that train (AdamW, no weight decay).
    pub learning_rate: f64,
}

/// Karpathy's "Adam at 3e-4" is a safe baseline; one fixed batch tolerates a larger step and
/// must be memorised within a couple of hundred steps, so 3e-3 keeps the check fast.
pub const DEFAULT_LEARNING_RATE: f64 = 3e-3;
/// Enough for every clean zoo model to memorise one batch (calibrated on the zoo).
pub const DEFAULT_STEPS: usize = 200;

impl Default for Options {
    fn default() -> Self {
        Options {
            device: Device::Cpu,
            dtype: DType::F32,
            seed: 0,
            steps: DEFAULT_STEPS,
            learning_rate: DEFAULT_LEARNING_RATE,
        }
    }
}
