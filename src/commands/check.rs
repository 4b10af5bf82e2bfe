//! `mldebug check <id|all> --model <path>`: zoo models run in this process; any other path
//! (`crate::Net`, `mycrate::models::Net`) goes through the generated harness (see `harness`).

use crate::cli::Global;
use crate::{Error, Exit, Result};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A check id (init-loss, overfit, grad-flow, nan-trace, label-mask, batch-leak,
    /// class-balance) or `all`.
    pub check: String,
    /// `zoo::<name>` for a built-in model, or a type path in your crate (`crate::Net`).
    #[arg(long)]
    pub model: String,
}

pub fn run(args: Args, _g: &Global) -> Result<Exit> {
    if args.model.starts_with("zoo::") {
        Err(Error::internal("zoo checks are not built yet"))
    } else {
        Err(Error::internal("the harness is not built yet"))
    }
}
