//! mldebug: an ML-training debugger.
//!
//! - [`catalog`]: SKILL.md, PLAYBOOK.md, refs/ and evidence/ parsed into typed data.
//! - [`commands`]: one module per subcommand (argument struct + `run`).
//! - [`doctor`]: run logs read and judged for `mldebug doctor` (the detectors are the
//!   `mldebug-doctor` crate).
//! - [`context`]: the global flags resolved once (output format, colour, catalog source).
//! - [`sweep`]: run-file readers and the statistics behind `sweep-compare`.
//! - [`harness`]: runs the checks on a model in the user's own crate.
//! - [`run`]: `mldebug run -- <command>`: the user's training command watched from inside.
//! - [`torch`]: runs the checks on a PyTorch model through the embedded driver.
//! - [`child_process`]: the time limit and process group both child processes run under.
//! - [`render`]: tables, JSON and plots; nothing else prints.
//! - [`suggest`]: the edit distance behind every "did you mean".
//! - [`yaml_depth`]: refuses YAML nested too deep before the parser sees it.
//! - `fuzzing`: the fuzz targets' entry point (hidden; see the README's "Fuzzing").
//!
//! The diagnostics themselves live in the `mldebug-diagnostics` crate.

pub mod atomic_file;
pub mod candle_threads;
pub mod catalog;
pub mod child_process;
pub mod cli;
pub mod commands;
pub mod context;
pub mod doctor;
pub mod error;
pub mod exit;
#[doc(hidden)]
pub mod fuzzing;
pub mod harness;
pub mod render;
pub mod run;
pub mod torch;

pub use error::{Error, Kind, Result};
pub use exit::Exit;
/// The run readers and statistics (the `mldebug-sweep` crate).
pub use mldebug_sweep as sweep;
/// Shared text handling (the `mldebug-text` crate).
pub use mldebug_text::{suggest, yaml_depth};
