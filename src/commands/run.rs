//! `mldebug run [--steps N] [--timeout S] [--trace FILE] -- <command> [args...]`: runs the
//! user's own training command unmodified, with the embedded probes on its Python path, watches
//! the first N optimizer steps of every process (every rank under `torchrun` or `accelerate
//! launch`), ends it, and judges the traces with the same judgement `mldebug doctor TRACE`
//! uses.
//!
//! The program's stdout and stderr pass through untouched; with `--json` its stdout goes to
//! stderr, so stdout holds the JSON document alone.
//!
//! Exit status: 2 when the command does not exist, hides its Python from the probes, or ran no
//! PyTorch training at all; 4 when the program failed on its own (it raised, or exited non-zero
//! before the step limit), with the trace so far judged; else 1 when a finding is a fail, 0
//! otherwise.

use crate::context::Context;
use crate::render::output::{emit, emit_json, note};
use crate::render::{json, run as render, style::Style};
use crate::run::{command, launch, probes::ProbeDir, traces};
use crate::{Error, Exit, Result};
use std::path::PathBuf;
use std::time::Duration;

/// Optimizer steps watched by default: enough for every probe (the heavy ones run on the
/// first three) and for a curve the log detectors can judge, in seconds on a small model.
pub const DEFAULT_STEPS: u64 = 30;
/// The most steps `--steps` takes (0 is the whole run).
pub const MAX_STEPS: u64 = 1_000_000;
/// Default time limit, seconds.
pub const DEFAULT_TIMEOUT: u64 = 1800;
/// The longest `--timeout`, seconds (a day).
pub const MAX_TIMEOUT: u64 = 86_400;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Optimizer steps to watch in each process before ending it (0 = the whole run).
    #[arg(long, default_value_t = DEFAULT_STEPS,
          value_parser = clap::value_parser!(u64).range(0..=MAX_STEPS))]
    pub steps: u64,
    /// End the command after this many seconds and judge what was traced.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_TIMEOUT,
          value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT))]
    pub timeout: u64,
    /// Keep the trace (JSON lines, every process) at FILE; `mldebug doctor FILE` judges it again.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// The training command, after `--`: `python train.py ...`, `python -m pkg.train`,
    /// `torchrun --nproc_per_node 2 train.py`, `accelerate launch train.py`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

pub fn run(args: Args, g: &Context) -> Result<Exit> {
    let cmd = command::resolve(&args.command)?;
    if let Some(t) = &args.trace {
        check_trace_path(t)?;
    }
    let probes = ProbeDir::create()?;
    let ended = launch::run(
        &cmd.program,
        &cmd.args,
        &probes.environment(args.steps),
        Some(Duration::from_secs(args.timeout)),
        g.json(),
    )?;
    let (text, cut) = traces::collect(probes.path())?;
    if cut {
        note("mldebug run: the traces were longer than mldebug reads; the first part is judged");
    }
    if let Some(t) = &args.trace {
        traces::keep(&text, t)?;
        note(&format!(
            "mldebug run: trace kept in {} (mldebug doctor {} judges it again)",
            t.display(),
            t.display()
        ));
    }
    let processes = traces::parse(&text)?;
    let failed_alone =
        !ended.timed_out && !ended.interrupted && ended.status.is_some_and(|s| !s.success());
    if processes.is_empty() && !ended.timed_out && !ended.interrupted {
        return Err(nothing_observed(&args.command, failed_alone, ended));
    }
    let catalog = crate::catalog::open(g)?;
    let report = crate::run::report::build(&args, &processes, &ended, &catalog);
    if g.json() {
        emit_json(&json::to_string("run", &report)?)?;
    } else {
        emit(
            &render::render(&report, Style::from(g.stdout)),
            Style::from(g.stdout).colour,
        )?;
    }
    Ok(if failed_alone {
        Exit::ModelError
    } else if report.counts.fail > 0 {
        Exit::Failed
    } else {
        Exit::Ok
    })
}

/// No process built a model or an optimizer: the command is not a PyTorch training program, or
/// it failed before building one.
fn nothing_observed(words: &[String], failed: bool, ended: launch::Ended) -> Error {
    let shown = words.join(" ");
    if failed {
        let status = ended
            .status
            .map(crate::child_process::describe)
            .unwrap_or_else(|| "an unknown status".into());
        return Error::model(format!(
            "`{shown}` ended with {status} before it built a PyTorch model or optimizer (its own \
             output above says why)"
        ));
    }
    Error::usage(format!(
        "`{shown}` ran, but no process of it built a PyTorch model or optimizer: nothing to \
         judge. mldebug run watches Python training programs that import torch"
    ))
}

/// `--trace` must name a file whose folder exists, and not a folder.
fn check_trace_path(p: &std::path::Path) -> Result<()> {
    if p.is_dir() {
        return Err(Error::usage(format!(
            "--trace {}: a folder; name a file",
            p.display()
        )));
    }
    let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
    if parent.is_some_and(|d| !d.is_dir()) {
        return Err(Error::usage(format!(
            "--trace {}: no such folder {}",
            p.display(),
            parent.map(|d| d.display().to_string()).unwrap_or_default()
        )));
    }
    Ok(())
}
