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
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

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
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(models.len())
        .max(1);
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Report>>> = models.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(model) = models.get(i) else { break };
                let report = (model.run)(checks, &options[i]);
                *slots[i]
                    .lock()
                    .expect("no worker panics while holding a slot") = Some(report);
                progress.done(model.name);
            });
        }
    });
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .expect("no worker panics while holding a slot")
                .expect("every model was run")
        })
        .collect()
}
