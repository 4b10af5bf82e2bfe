//! `mldebug completions <shell>`: shell completion scripts, generated from the CLI definition
//! (handed in by the dispatch, [`crate::cli::run`]).

use crate::context::Context;
use crate::render::output::emit;
use crate::{Error, Exit, Result};
use clap_complete::Shell;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// bash, zsh, fish, powershell or elvish.
    pub shell: Shell,
}

/// Writes the completion script of `cmd`, the whole command line's definition.
pub fn run(args: Args, mut cmd: clap::Command, _g: &Context) -> Result<Exit> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "mldebug", &mut script);
    let script = String::from_utf8(script)
        .map_err(|e| Error::internal(format!("completion script is not UTF-8: {e}")))?;
    emit(&script, false)?;
    Ok(Exit::Ok)
}
