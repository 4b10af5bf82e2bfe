//! Everything a person or a program reads: tables, JSON, sparklines and plots. Commands compute,
//! then hand their results here; nothing else prints.

pub mod matrix;
pub mod number;
pub mod plot;
pub mod progress;
pub mod report;
pub mod sparkline;
pub mod style;
pub mod zoo;
