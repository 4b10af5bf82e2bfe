//! One module per subcommand: its arguments and its `run` (the command line that holds them all,
//! and the dispatch to them, is [`crate::cli`]).

pub mod catalog;
pub mod check;
pub mod completions;
pub mod demo;
pub mod doctor;
pub mod list;
pub mod memory;
pub mod own_model;
pub mod quote;
pub mod run;
pub mod search;
pub mod show;
pub mod skill;
pub mod sweep_compare;
pub mod triage;
pub mod zoo;
