//! `mldebug check <id|all> --model <path>`: zoo models run in this process; any other path
//! (`crate::Net`, `mycrate::models::Net`) goes through the generated harness (see `harness`).

use crate::cli::Global;
use crate::{Error, Exit, Result};
use mldebug_diagnostics::{CheckId, Status};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A check id (init-loss, overfit, grad-flow, nan-trace, label-mask, batch-leak,
    /// class-balance) or `all`.
    pub check: String,
    /// `zoo::<name>` for a built-in model, or a type path in your crate (`crate::Net`).
    #[arg(long)]
    pub model: String,
    #[command(flatten)]
    pub build: crate::harness::BuildArgs,
}

pub fn run(args: Args, g: &Global) -> Result<Exit> {
    if args.model.starts_with("zoo::") {
        return Err(Error::internal("zoo checks are not built yet"));
    }
    let checks = if args.check == "all" {
        CheckId::ALL.to_vec()
    } else {
        vec![args.check.parse::<CheckId>().map_err(Error::usage)?]
    };
    let settings = crate::harness::RunSettings {
        model: args.model.clone(),
        checks,
        device: "cpu".to_string(),
        seed: 0,
        steps: None,
    };
    let report = crate::harness::run_check(&settings, &args.build, g)?;
    println!(
        "{}",
        serde_json::to_string_pretty(&report).map_err(|e| Error::internal(e.to_string()))?
    );
    Ok(match report.worst() {
        Status::Error => Exit::ModelError,
        Status::Fail => Exit::Failed,
        _ => Exit::Ok,
    })
}
