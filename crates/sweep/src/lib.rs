//! `sweep-compare`: read runs from the formats practitioners already have, reduce each run to one
//! number, and compare two arms honestly over seeds.
//!
//! - [`error`]: the crate's one error type (bad options, unreadable files).
//! - [`record`]: the one run record every reader produces.
//! - `readers`: one module per input format, detected by shape.
//! - [`reduce`]: each run's metric to one number (last, best, mean of the last K, at a step).
//! - [`arms`], [`pairing`]: which runs are A and B, which way is better, and whether seeds pair.
//! - [`stats`]: the statistics, free of I/O; [`power`]: MDE and seeds needed.
//! - [`verdict`], [`warnings`]: the plain-words verdict and what to distrust.
//! - [`duplicates`]: the same run read twice is counted once.
//! - [`options`]: what a comparison is asked (the command line's choices) and its bounds.
//! - [`compare`]: runs in, a [`comparison::Comparison`] out: each task analysed (`task`), several
//!   tasks Holm-adjusted and judged together (`multi_task`), the design warned about (`design`);
//!   numbers are written by `mldebug_text::number`.

#![warn(missing_docs)]

pub mod arms;
pub mod compare;
pub mod comparison;
mod design;
pub mod duplicates;
pub mod error;
mod multi_task;
pub mod options;

pub mod pairing;
pub mod power;
pub mod readers;
pub mod record;
pub mod reduce;
pub mod stats;
mod task;
pub mod verdict;
pub mod warnings;

pub use error::{Error, Result};
