//! What `mldebug memory` prints for a config or a shape, as `--json` writes it: the estimate
//! with the setup it assumed, each GPU target and the levers; or, for a candle model, its own
//! estimate.

use crate::architecture::Shape;
use crate::estimate::Estimate;
use crate::fit::{Lever, TargetFit};
use crate::measured::ModelEstimate;
use crate::setup::Setup;
use serde::Serialize;

/// Everything `mldebug memory` prints, as `--json` writes it.
#[derive(Debug, Serialize)]
pub struct MemoryReport {
    /// Where the shape came from: the config file, `flags`, or `--params`.
    pub source: String,
    /// The model's shape.
    pub shape: Shape,
    /// The training setup.
    pub setup: Setup,
    /// The estimate for that shape and setup.
    pub estimate: Estimate,
    /// Share of each GPU kept free.
    pub headroom: f64,
    /// Fits or not, per GPU target.
    pub targets: Vec<TargetFit>,
    /// The changes that save the most, largest first.
    pub levers: Vec<Lever>,
    /// What the arithmetic assumes, in words.
    pub assumptions: Vec<String>,
}

/// What `mldebug memory --model zoo::<name>` prints, as `--json` writes it.
#[derive(Debug, Serialize)]
pub struct ModelMemory {
    /// The model as given (`zoo::tiny-gpt`).
    pub model: String,
    /// The estimate of each stage from the model itself.
    pub estimate: ModelEstimate,
}
