//! `mldebug demo --torch`: the PyTorch zoo (embedded, unpacked into a private temp folder) run
//! through the driver with the user's Python, laid out in the same matrix as candle's zoo.

use super::{show, Args};
use crate::context::Context;
use crate::render::output::note;
use crate::render::progress::ModelsProgress;
use crate::torch::target::{Lora, Target};
use crate::torch::zoo::{self, Entry, Unpacked};
use crate::torch::{driver, run_check, TorchSettings};
use crate::{Exit, Result};
use mldebug_diagnostics::plan::DEFAULT_TIMEOUT_S;
use mldebug_judge::matrix::DemoMatrix;
use mldebug_judge::{error_finding, Ctx};
use mldebug_report::{CheckId, Report, Subject, Task};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

pub fn run(args: &Args, g: &Context) -> Result<Exit> {
    let entries = zoo::manifest()?;
    let unpacked = Unpacked::new()?;
    let python = driver::interpreter(args.python.as_ref());
    let (runnable, left_out): (Vec<&Entry>, Vec<&Entry>) = entries
        .iter()
        .partition(|e| e.needs.iter().all(|m| has_module(&python, m)));
    if !left_out.is_empty() {
        let names: Vec<&str> = left_out.iter().map(|e| e.name.as_str()).collect();
        note(&format!(
            "note: left out (they need {} in {}): {}",
            missing_modules(&left_out, &python),
            python.display(),
            names.join(", ")
        ));
    }
    let checks = CheckId::ALL.to_vec();
    let progress = ModelsProgress::new(runnable.len());
    // Two drivers at a time, each on one thread: the models are tiny, and Python's start-up
    // is serial anyway.
    let reports = mldebug_text::parallel::map_in_order(&runnable, 2, |_, entry| {
        let report = run_entry(entry, &unpacked.dir, args, &python, &checks);
        progress.done(&entry.name);
        report
    });
    progress.finish();
    let described: Vec<_> = runnable.iter().map(|e| e.matrix_model()).collect();
    let matrix = DemoMatrix::build(&described, &reports, &checks);
    show(&matrix, g)
}

fn run_entry(entry: &Entry, dir: &Path, args: &Args, python: &Path, checks: &[CheckId]) -> Report {
    let spec = entry.spec(dir);
    let settings = || -> Result<TorchSettings> {
        Ok(TorchSettings {
            target: Target::parse(&spec, dir)?,
            lora: entry.lora.as_deref().map(Lora::parse).transpose()?,
            lora_spec: entry.lora.clone(),
            spec: spec.clone(),
            python: Some(python.to_path_buf()),
            plan: args.run.plan(
                checks.to_vec(),
                vec![args.run.seed],
                Duration::from_secs(DEFAULT_TIMEOUT_S),
            ),
            learning_rate: mldebug_diagnostics::options::DEFAULT_LEARNING_RATE,
            progress: false,
            threads: Some(1),
        })
    };
    match settings().and_then(|s| run_check(&s)) {
        Ok(judged) => {
            let mut report = judged.into_report();
            report.model = entry.name.clone();
            report
        }
        Err(e) => {
            let ctx = Ctx {
                subject: Subject::torch(&spec, &[]),
                task: Task::Classification,
                steps: args.run.steps,
                learning_rate: mldebug_diagnostics::options::DEFAULT_LEARNING_RATE,
            };
            Report {
                model: entry.name.clone(),
                device: args.run.device.name(),
                seed: args.run.seed,
                checks: checks
                    .iter()
                    .map(|&c| error_finding(c, &e.message, &ctx))
                    .collect(),
            }
        }
    }
}

fn has_module(python: &Path, module: &str) -> bool {
    let mut command = Command::new(python);
    crate::candle_threads::hide_from(&mut command);
    command
        .args(["-c", &format!("import {module}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn missing_modules(left_out: &[&Entry], python: &Path) -> String {
    let mut missing: Vec<&str> = left_out
        .iter()
        .flat_map(|e| e.needs.iter().map(String::as_str))
        .filter(|m| !has_module(python, m))
        .collect();
    missing.sort_unstable();
    missing.dedup();
    missing.join(" and ")
}
