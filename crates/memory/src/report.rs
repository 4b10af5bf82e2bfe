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
    pub shape: Shape,
    pub setup: Setup,
    pub estimate: Estimate,
    /// Share of each GPU kept free.
    pub headroom: f64,
    pub targets: Vec<TargetFit>,
    pub levers: Vec<Lever>,
    /// What the arithmetic assumes, in words.
    pub assumptions: Vec<String>,
}

/// What `mldebug memory --model zoo::<name>` prints, as `--json` writes it.
#[derive(Debug, Serialize)]
pub struct ModelMemory {
    /// The model as given (`zoo::tiny-gpt`).
    pub model: String,
    pub estimate: ModelEstimate,
}
