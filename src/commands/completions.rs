//! `mldebug completions <shell>`: shell completion scripts, generated from the CLI definition.

use crate::cli::Cli;
use crate::context::Context;
use crate::render::output::emit;
use crate::{Error, Exit, Result};
use clap::CommandFactory;
use clap_complete::Shell;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// bash, zsh, fish, powershell or elvish.
    pub shell: Shell,
}

pub fn run(args: Args, _g: &Context) -> Result<Exit> {
    let mut cmd = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "mldebug", &mut script);
    let script = String::from_utf8(script)
        .map_err(|e| Error::internal(format!("completion script is not UTF-8: {e}")))?;
    emit(&script, false)?;
    Ok(Exit::Ok)
}
