//! Everything a person or a program reads: tables, Markdown, JSON, sparklines and plots.
//! Commands compute, then hand their results here; nothing else prints.
//!
//! - [`report`], [`seeds`], [`matrix`], [`zoo`], [`plot`], [`sparkline`], [`progress`]: `check`
//!   (`seeds`: `check --seeds`), `demo`, `zoo`.
//! - [`sweep_report`]: the `sweep-compare` report as format-neutral blocks;
//!   [`sweep_table`] (terminal), [`sweep_markdown`] and [`sweep_plot`] (SVG) draw it.
//! - [`quotes`], [`table`], [`text`], [`paint`], [`show`], [`search`], [`triage`], [`catalog`]: the
//!   knowledge commands (quote, show, search, triage, list, catalog verify).
//! - [`doctor`] (terminal) and [`doctor_plot`] (SVG): the `doctor` report.
//! - [`memory`]: the `mldebug memory` estimate.
//! - [`json`], [`output`]: JSON on stdout and writing it out; [`plot_target`]: where `--plot` writes;
//!   [`axis`]: the ranges every plot's axes are drawn on.
//! - [`style`]: the colour decision (numbers are written by `mldebug_text::number`).

pub mod axis;
pub mod catalog;
pub mod doctor;
pub mod doctor_plot;
pub mod json;
pub mod matrix;
pub mod memory;
pub mod output;
pub mod paint;
pub mod plot;
pub mod plot_target;
pub mod progress;
pub mod quotes;
pub mod report;
pub mod run;
pub mod search;
pub mod seeds;
pub mod show;
pub mod sparkline;
pub mod style;
pub mod sweep_markdown;
pub mod sweep_plot;
pub mod sweep_report;
pub mod sweep_table;
pub mod table;
pub mod terminal;
pub mod text;
pub mod triage;
pub mod zoo;
