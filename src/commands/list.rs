//! `mldebug list` (in progress).

use crate::cli::Global;
use crate::{Error, Exit, Result};

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args, _g: &Global) -> Result<Exit> {
    Err(Error::internal("`list` is not built yet"))
}
