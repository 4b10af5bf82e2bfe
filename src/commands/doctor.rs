//! `mldebug doctor PATHS...`: read a training run's own logs and say what went wrong: each
//! finding with its symptom id, severity, the step where it starts, its numbers, and the PLAYBOOK
//! row with the same id (hypotheses, most likely first, and the checks to run next).
//!
//! Reads every format `sweep-compare` reads, plus plain-text training logs (see
//! `mldebug_doctor::textlog`). `--watch` follows logs that are still being written.
//!
//! Exit status: 1 when a finding is at least as bad as `--fail-on` (default `fail`), else 0;
//! with `--watch --fail-on LEVEL`, 1 at the first such finding, while the run is still going;
//! with `--watch --idle-timeout`, 2 when a log is still unreadable when the watch stops.

mod follow;
pub(crate) mod watch;

pub(crate) use follow::Follow;

use crate::doctor::{read, report};

use crate::context::Context;
use crate::render::output::{emit, emit_json, note};
use crate::render::{doctor as render, doctor_plot, json, style::Style};
use crate::{Exit, Result};
use clap::ValueEnum;
use mldebug_doctor::Severity;
use std::path::PathBuf;

pub use report::{build, Report};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Training logs: files, directories or globs (TensorBoard, W&B, MLflow, HF
    /// trainer_state.json, Lightning metrics.csv, JSONL, and plain-text stdout: HF Trainer
    /// dicts, `step N ... loss X` lines, tqdm and Keras progress bars).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Judge this series as the loss instead of the ones recognised by name (repeat for
    /// several; a name with val/eval in it is a validation loss).
    #[arg(long = "metric", value_name = "NAME")]
    pub metrics: Vec<String>,
    /// Also draw the curves, with each finding's step marked: to FILE.svg, or into a folder as
    /// doctor.svg.
    #[arg(long, value_name = "FILE.svg|DIR")]
    pub plot: Option<PathBuf>,
    /// Follow logs that are still being written (text, JSONL, CSV, TensorBoard), printing each
    /// new finding as it appears.
    #[arg(long)]
    pub watch: bool,
    /// Exit 1 when a finding is this bad or worse (default: fail); with --watch, at the first.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub fail_on: Option<FailOn>,
    /// With --watch: stop once the logs have not changed for this many seconds (default: watch
    /// until interrupted).
    #[arg(long, value_name = "SECONDS", requires = "watch", value_parser = seconds)]
    pub idle_timeout: Option<f64>,
}

/// The longest `--idle-timeout`: a year, beyond any training run; a longer one is a typo.
const MAX_IDLE_TIMEOUT_S: f64 = 365.0 * 24.0 * 3600.0;

/// `--idle-timeout`: a finite number of seconds from 0 to [`MAX_IDLE_TIMEOUT_S`] (NaN, inf and
/// negative numbers are refused, exit 2).
fn seconds(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if v.is_finite() && (0.0..=MAX_IDLE_TIMEOUT_S).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "{s:?}: give a number of seconds from 0 to {MAX_IDLE_TIMEOUT_S}"
        ))
    }
}

/// The severity that makes the exit status 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Fail,
    Warn,
}

impl FailOn {
    pub fn severity(self) -> Severity {
        match self {
            FailOn::Fail => Severity::Fail,
            FailOn::Warn => Severity::Warn,
        }
    }
}

/// Read, diagnose and render to a string (the testable core of the command), with the worst
/// severity found.
pub fn report(args: &Args, g: &Context) -> Result<(String, Option<Severity>)> {
    let runs = read::read(&args.paths, &args.metrics)?;
    for n in runs.iter().flat_map(|r| &r.notes) {
        note(&format!("mldebug doctor: {n}"));
    }
    let catalog = crate::catalog::open(g)?;
    let report = build(&runs, &args.metrics, &catalog);
    if let Some(path) = &args.plot {
        doctor_plot::write(&report, &crate::render::plot_target::PlotTarget::new(path))?;
    }
    let text = if g.json() {
        json::to_string("doctor", &report)?
    } else {
        render::render(&report, Style::from(g.stdout))
    };
    Ok((text, report.worst()))
}

pub fn run(args: Args, g: &Context) -> Result<Exit> {
    if args.watch {
        return watch::run(&args, g);
    }
    let (text, worst) = report(&args, g)?;
    if g.json() {
        emit_json(&text)?;
    } else {
        emit(&text, Style::from(g.stdout).colour)?;
    }
    Ok(exit_for(worst, args.fail_on))
}

/// 1 when the worst finding reaches the `--fail-on` level (default `fail`).
fn exit_for(worst: Option<Severity>, fail_on: Option<FailOn>) -> Exit {
    let level = fail_on.unwrap_or(FailOn::Fail).severity();
    if worst.is_some_and(|w| w >= level) {
        Exit::Failed
    } else {
        Exit::Ok
    }
}
