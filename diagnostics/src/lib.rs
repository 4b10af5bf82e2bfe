//! Training-bug checks for candle models.
//!
//! A model opts in by implementing [`DebugModel`] (by hand or with [`debug_model!`]); each check in
//! [`checks`] then runs on fresh parameters built from a seeded [`VarBuilder`](candle_nn::VarBuilder)
//! and returns a [`Finding`] with numbers, a status, the catalog entry that explains it and the next
//! command to run. Nothing here prints: rendering is the caller's job.
//!
//! - [`model`]: the `DebugModel` trait, `Batch`, `Task`.
//! - [`init`]: the seeded `VarBuilder` that makes parameters reproducible.
//! - [`options`]: device, dtype, seed, steps, learning rate.
//! - [`plan`]: what a run of the checks is asked to do (checks, seeds, steps, device, time
//!   limit) and the limits on it, for the CLI's flags and both requests alike.
//! - [`report`]: the JSON report schema (in the one JSON envelope, `schema_version` 3; NaN and infinities as the strings `"NaN"`, `"inf"`, `"-inf"`), check ids and statuses.
//! - [`checks`]: one module per check, plus [`run_checks`].
//! - [`trace`] and [`nn`]: the frame recorder and the traced layer wrappers.
//! - [`memory`]: the counting allocator and the measured training run behind `check memory`.
//! - [`zoo`]: clean reference models and their buggy twins.
//! - [`harness`]: the entry point the generated harness crate calls.

#![warn(missing_docs)]

pub mod checks;
pub mod harness;
pub mod init;
pub mod memory;
pub mod model;
pub mod nn;
pub mod options;
pub mod plan;
/// The report schema (the `mldebug-report` crate, shared with readers that have no candle).
pub use mldebug_report as report;
pub mod rng;
pub mod trace;
pub mod zoo;

pub use checks::run_checks;
pub use init::{seeded_var_builder, ParamStore};
pub use model::{Batch, DebugModel, Task};
pub use options::{Options, Progress, ProgressEvent};
pub use report::{CheckId, Finding, Report, Series, Status};

// Re-exported so user crates and generated harnesses name one candle version.
pub use candle_core;
pub use candle_nn;
