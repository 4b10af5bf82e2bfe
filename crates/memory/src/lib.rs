//! Where training memory goes: napkin math from a model's shape and a training setup, and the
//! judgement of what a run measured. No ML framework: the candle measurement lives in
//! `mldebug-diagnostics`, the command line in `mldebug`.
//!
//! - [`config`]: HF config.json readers (llama, mistral, qwen2/3, gemma/2, phi3, gpt2, gpt_neox,
//!   bert) to an [`architecture::Shape`]; [`architecture`]: the parameter inventory.
//! - [`guess`]: a llama-style shape that holds a bare parameter count (`--params 7B`).
//! - [`setup`]: the training setup (method, precision, quantization, optimizer, batch, ...).
//! - [`weights`], [`optimizer`], [`activations`]: bytes per component (activations after
//!   Korthikanti et al. 2022).
//! - [`mod@estimate`]: components and the peak of each stage; [`describe`]: the words for each.
//! - [`fit`]: GPU targets, what fits, the largest batch and context, the levers; [`report`]:
//!   all of it together, as `mldebug memory` prints it.
//! - [`measured`]: measured memory per stage and step, framework-neutral; [`judge`]: its
//!   verdict (leak, avoidable intermediate, second-batch spike).
//! - [`units`]: strict parsing of `24GB` and `7B`, bytes for people.

#![warn(missing_docs)]

pub mod activations;
pub mod architecture;
pub mod config;
pub mod describe;
pub mod estimate;
pub mod fit;
pub mod guess;
pub mod judge;
pub mod measured;
pub mod optimizer;
pub mod report;
pub mod setup;
pub mod units;
pub mod weights;

pub use architecture::{Family, Shape};
pub use estimate::{estimate, Estimate, Stage};
pub use setup::Setup;
