//! Rendering: tables, Markdown, JSON and plots. Nothing else prints.
//!
//! - [`sweep_report`]: the `sweep-compare` report as format-neutral blocks;
//!   [`sweep_table`] (terminal), [`sweep_markdown`] and [`sweep_plot`] (SVG) draw it.

pub mod sweep_markdown;
pub mod sweep_plot;
pub mod sweep_report;
pub mod sweep_table;
