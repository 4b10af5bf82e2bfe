//! `sweep-compare`: read runs from the formats practitioners already have, reduce each run to one
//! number, and compare two arms honestly over seeds.
//!
//! - [`record`]: the one run record every reader produces.
//! - `readers`: one module per input format, detected by shape.
//! - `stats`, `reduce`, `verdict`, `compare`: the statistics and the plain-words verdict.

pub mod readers;
pub mod record;
pub mod stats;
