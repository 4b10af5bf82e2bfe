//! The command line: global flags and one variant per subcommand, and the dispatch of a parsed
//! command line to its subcommand. Each subcommand's own arguments live beside its code in
//! `commands/`.

use crate::commands;
pub use crate::context::ColorChoice;
use crate::context::Context;
use crate::{Exit, Result};
use clap::{CommandFactory, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "mldebug",
    version,
    about = "Find silent training bugs: folklore you can read, checks you can run, comparisons you can trust",
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, clap::Args)]
pub struct Global {
    /// Print machine-readable JSON on stdout instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
    /// Read SKILL.md, PLAYBOOK.md, refs/ and evidence/ from DIR instead of the embedded copy.
    #[arg(long, global = true, value_name = "DIR")]
    pub catalog: Option<PathBuf>,
    /// When to use colour (auto: only on a terminal, and never when NO_COLOR is set).
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

impl Global {
    /// The flags resolved against the environment, once, for every command.
    pub fn context(&self) -> Context {
        Context::resolve(self.json, self.color, self.catalog.clone())
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Quotes from practitioners, with source and link.
    Quote(commands::quote::Args),
    /// List entries, sources, checks or symptoms.
    List(commands::list::Args),
    /// Show one entry, source or check.
    Show(commands::show::Args),
    /// Search the catalog.
    Search(commands::search::Args),
    /// From a symptom in plain words to hypotheses and the checks that tell them apart.
    Triage(commands::triage::Args),
    /// Work on the catalog itself (verify).
    Catalog(commands::catalog::Args),
    /// Install the agent skill (SKILL.md, PLAYBOOK.md, refs/).
    Skill(commands::skill::Args),
    /// Run checks on a model: `zoo::<name>` or a type in your crate (`crate::Net`).
    Check(commands::check::Args),
    /// List the built-in models and what each buggy twin breaks.
    Zoo(commands::zoo::Args),
    /// Every check over the whole zoo: expected verdict beside the actual one.
    Demo(commands::demo::Args),
    /// Where training memory goes: weights, gradients, optimizer state, activations, per stage,
    /// against the GPUs you might use.
    Memory(commands::memory::Args),
    /// Does A really beat B? Compare runs over seeds.
    SweepCompare(commands::sweep_compare::Args),
    /// Read a training run's logs and say what went wrong, with the step it starts at.
    Doctor(commands::doctor::Args),
    /// Run your own training command, watch one cycle of it from inside, and say what is
    /// silently wrong: `mldebug run -- python train.py`.
    Run(commands::run::Args),
    /// Shell completions.
    Completions(commands::completions::Args),
}

/// Dispatch a parsed command line; the `Exit` is the process status.
pub fn run(cli: Cli) -> Result<Exit> {
    use commands::*;
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
        Command::Completions(a) => completions::run(a, Cli::command(), g),
    }
}
