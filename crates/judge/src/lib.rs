//! The judgement of every check (`mldebug check`, `demo`), one implementation for every
//! framework. Logs and run traces (`mldebug doctor`, `mldebug run`) are judged by
//! `mldebug-doctor`, not here.
//!
//! A check is a **measurement** (framework-specific: candle in `mldebug-diagnostics`, PyTorch in
//! the driver the binary embeds, `torch/driver/`) and a **judgement** (this crate): thresholds,
//! status, the sentence a person reads, the catalog entry and the next command. Each module holds
//! one check's measurement struct (serde: the driver writes it as JSON, see `torch/CONTRACT.md`)
//! and its `judge` function; [`judge_json`] reads a measurement the driver wrote.
//!
//! Nothing here knows a tensor: the same numbers give the same finding whichever framework
//! measured them.

#![warn(missing_docs)]

pub mod batch_leak;
pub mod class_balance;
mod common;
pub mod cut;
pub mod grad_flow;
pub mod init_loss;
pub mod label_mask;
pub mod matrix;
pub mod memory;
pub mod nan_trace;
pub mod no_backward;
pub mod overfit;
mod wire;

pub use common::{error_finding, show_command, skipped, Ctx, DEFAULT_STEPS, MAX_STEPS};
pub use mldebug_report::{CheckId, Finding, Series, Status, Subject, Task, IGNORE_INDEX};
pub use wire::judge_json;
