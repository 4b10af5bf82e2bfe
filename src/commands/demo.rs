//! `mldebug demo`: every check on every zoo model, each verdict beside the one a correct mldebug
//! must give (a `fail` for the checks a buggy twin is known to break, no `fail` anywhere on a
//! clean model). Exit 0 only when every expected verdict matched and nothing errored.

use super::check::RunArgs;
use crate::context::Context;
use crate::render::output::{emit, emit_json};
use crate::render::{matrix, progress::ModelsProgress, style::Style};
use crate::{Exit, Result};
use mldebug_diagnostics::zoo::{self, ZooModel};
use mldebug_diagnostics::{CheckId, Options, Report};

mod torch_demo;
use mldebug_judge::matrix::DemoMatrix;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub run: RunArgs,
    /// The PyTorch zoo instead (embedded; run with your Python and torch; models that need
    /// transformers or peft are left out when those are missing).
    #[arg(long)]
    pub torch: bool,
    /// The Python interpreter for --torch (default: $MLDEBUG_PYTHON, the active virtualenv's,
    /// or python3).
    #[arg(long, value_name = "PATH", requires = "torch")]
    pub python: Option<std::path::PathBuf>,
}

pub fn run(args: Args, g: &Context) -> Result<Exit> {
    if args.torch {
        return torch_demo::run(&args, g);
    }
    let models: Vec<&ZooModel> = zoo::all().iter().collect();
    let checks = CheckId::ALL.to_vec();
    let options: Vec<Options> = models
        .iter()
        .map(|m| args.run.options(&format!("zoo::{}", m.name)))
        .collect::<Result<_>>()?;
    let progress = ModelsProgress::new(models.len());
    let reports = run_all(&models, &options, &checks, &progress);
    progress.finish();
    let described: Vec<_> = models.iter().map(|m| m.matrix_model()).collect();
    let matrix = DemoMatrix::build(&described, &reports, &checks);
    show(&matrix, g)
}

/// Prints the matrix; exit 0 only when every expected verdict matched.
fn show(matrix: &DemoMatrix, g: &Context) -> Result<Exit> {
    if g.json() {
        emit_json(&crate::render::json::to_string("demo", matrix)?)?;
    } else {
        let style = Style::from(g.stdout);
        emit(&matrix::render(matrix, &style), style.colour)?;
    }
    Ok(if matrix.all_matched() {
        Exit::Ok
    } else {
        Exit::Failed
    })
}

/// Run every model on a few worker threads (the models are independent and small, so this
/// keeps both cores busy); the reports come back in zoo order. On a GPU, one model at a time:
/// the memory check reads the device's memory pool, which every thread's tensors share.
fn run_all(
    models: &[&ZooModel],
    options: &[Options],
    checks: &[CheckId],
    progress: &ModelsProgress,
) -> Vec<Report> {
    let on_cpu = options.iter().all(|o| o.device.is_cpu());
    let most = if on_cpu { usize::MAX } else { 1 };
    let threads = mldebug_text::parallel::threads_for(models.len(), most);
    mldebug_text::parallel::map_in_order(models, threads, |i, model| {
        let report = (model.run)(checks, &options[i]);
        progress.done(model.name);
        report
    })
}
