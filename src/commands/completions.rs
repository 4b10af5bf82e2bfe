//! `mldebug completions <shell>`: shell completion scripts, generated from the CLI definition.

use crate::cli::{Cli, Global};
use crate::{Exit, Result};
use clap::CommandFactory;
use clap_complete::Shell;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// bash, zsh, fish, powershell or elvish.
    pub shell: Shell,
}

pub fn run(args: Args, _g: &Global) -> Result<Exit> {
    let mut cmd = Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "mldebug", &mut std::io::stdout());
    Ok(Exit::Ok)
}
