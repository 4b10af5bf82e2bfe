//! `mldebug demo`: every check on every zoo model, each verdict beside the one a correct mldebug
//! must give (a `fail` for the checks a buggy twin is known to break, no `fail` anywhere on a
//! clean model). Exit 0 only when every expected verdict matched and nothing errored.

use super::check::RunArgs;
use crate::context::Context;
use crate::render::output::{emit, emit_json};
use crate::render::{matrix, progress::ModelsProgress, style::Style};
use crate::{Exit, Result};
use mldebug_diagnostics::zoo::{self, matrix::DemoMatrix, ZooModel};
use mldebug_diagnostics::{CheckId, Options, Report};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub run: RunArgs,
}

pub fn run(args: Args, g: &Context) -> Result<Exit> {
    let models: Vec<&ZooModel> = zoo::all().iter().collect();
    let checks = CheckId::ALL.to_vec();
    let options: Vec<Options> = models
        .iter()
        .map(|m| args.run.options(&format!("zoo::{}", m.name)))
        .collect::<Result<_>>()?;
    let progress = ModelsProgress::new(models.len());
    let reports = run_all(&models, &options, &checks, &progress);
    progress.finish();
    let matrix = DemoMatrix::build(&models, &reports, &checks);
    if g.json() {
        emit_json(&crate::render::json::to_string("demo", &matrix)?)?;
    } else {
        let style = Style::from(g.stdout);
        emit(&matrix::render(&matrix, &style), style.colour)?;
    }
    Ok(if matrix.all_matched() {
        Exit::Ok
    } else {
        Exit::Failed
    })
}

/// Run every model on a few worker threads (the models are independent and small, so this
/// keeps both cores busy); the reports come back in zoo order.
fn run_all(
    models: &[&ZooModel],
    options: &[Options],
    checks: &[CheckId],
    progress: &ModelsProgress,
) -> Vec<Report> {
    let threads = mldebug_text::parallel::threads_for(models.len(), usize::MAX);
    mldebug_text::parallel::map_in_order(models, threads, |i, model| {
        let report = (model.run)(checks, &options[i]);
        progress.done(model.name);
        report
    })
}
