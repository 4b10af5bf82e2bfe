//! One module per subcommand: its arguments and its `run`.

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

use crate::cli::{Cli, Command};
use crate::{Exit, Result};

/// Dispatch a parsed command line; the `Exit` is the process status.
pub fn run(cli: Cli) -> Result<Exit> {
    let g = &cli.global.context();
    match cli.command {
        Command::Quote(a) => quote::run(a, g),
        Command::List(a) => list::run(a, g),
        Command::Show(a) => show::run(a, g),
        Command::Search(a) => search::run(a, g),
        Command::Triage(a) => triage::run(a, g),
        Command::Catalog(a) => catalog::run(a, g),
        Command::Skill(a) => skill::run(a, g),
        Command::Check(a) => check::run(a, g),
        Command::Zoo(a) => zoo::run(a, g),
        Command::Demo(a) => demo::run(a, g),
        Command::Memory(a) => memory::run(a, g),
        Command::SweepCompare(a) => sweep_compare::run(a, g),
        Command::Doctor(a) => doctor::run(a, g),
        Command::Run(a) => run::run(a, g),
        Command::Completions(a) => completions::run(a, g),
    }
}
