//! `mldebug run [--steps auto|N] [--timeout S] [--trace FILE] -- <command> [args...]`: runs
//! the user's own training command unmodified, with the embedded probes on its Python path,
//! watches every process (every rank under `torchrun` or `accelerate launch`) for one cycle of
//! the program (`auto`: its first evaluation and second epoch, within caps) or N optimizer
//! steps, ends it, and judges the traces with the same judgement `mldebug doctor TRACE` uses.
//!
//! The program's stdout and stderr pass through untouched; with `--json` its stdout goes to
//! stderr, so stdout holds the JSON document alone.
//!
//! Exit status (the report is printed first in every case but 2): 2 when the command does not
//! exist, hides its Python from the probes, `--trace` names something that may not be
//! replaced, or the command ran no PyTorch training at all; 130 when mldebug was interrupted
//! (Ctrl-C, SIGINT), 143 when it was terminated (SIGTERM), 129 when its terminal closed (SIGHUP); 124 when the run reached
//! `--timeout`; 4 when the program failed on its own (it raised, was killed, or exited non-zero
//! before the step limit); 74 when the trace could not be kept; else 1 when a finding is a
//! fail, 0 otherwise. Should mldebug itself be killed, the command ends with it
//! (`run::guard`).

use crate::context::Context;
use crate::render::output::{emit, emit_json, note};
use crate::render::{json, run as render, style::Style};
use crate::run::window::{parse_steps, Steps};
use crate::run::{command, launch, probes::ProbeDir, report, traces, verdict};
use crate::{Error, Exit, Result};
use std::path::PathBuf;
use std::time::Duration;

/// Default time limit, seconds (the longest is the checks' too,
/// [`mldebug_diagnostics::plan::MAX_TIMEOUT_S`]).
pub const DEFAULT_TIMEOUT: u64 = 1800;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to watch in each process before ending it: `auto` (the default) watches one
    /// cycle of the program: the first steps with every probe, then lightly until it has run
    /// its first evaluation and started its second epoch; at least 30 steps, at most 1000
    /// steps or 300 s after its first step; a fail in the first 30 steps ends it there. N
    /// watches exactly N optimizer steps; 0 the whole run.
    #[arg(long, value_name = "auto|N", default_value = "auto", value_parser = parse_steps)]
    pub steps: Steps,
    /// End the command after this many seconds, 1 to 86400, and judge what was traced.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_TIMEOUT,
          value_parser = mldebug_diagnostics::plan::parse_timeout_s)]
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
    let target = args
        .trace
        .as_deref()
        .map(traces::Target::check)
        .transpose()?;
    let probes = ProbeDir::create()?;
    let mut checkpoint = verdict::Checkpoint::new(probes.path());
    let ended = launch::run(
        &cmd.program,
        &cmd.args,
        &probes.environment(args.steps),
        Some(Duration::from_secs(args.timeout)),
        g.json(),
        probes.path(),
        &mut || checkpoint.poll(),
    )?;
    let collected = traces::collect(probes.path())?;
    if collected.cut {
        note("mldebug run: the traces were longer than mldebug reads; the first part is judged");
    }
    for (file, line) in &collected.overlong {
        note(&format!(
            "mldebug run: line {line} of one process's trace ({file}) is longer than a record \
                        may be ({} bytes); that process is judged up to it",
            mldebug_doctor::trace::read::MAX_LINE
        ));
    }
    // The trace is kept before anything is judged; a failure to keep it is said after the
    // report, which is printed whole all the same. No process wrote one: what is there stays.
    let target = target.filter(|t| {
        let empty = collected.text.is_empty();
        if empty {
            note(&format!(
                "mldebug run: no process wrote a trace; {} is left as it was",
                crate::render::terminal::escape(&t.shown.display().to_string())
            ));
        }
        !empty
    });
    let trace_error = target.as_ref().and_then(|t| t.keep(&collected.text).err());
    if let (Some(t), None) = (&target, &trace_error) {
        // A path is data: a newline or an escape in it is shown escaped, never acted on.
        let shown = crate::render::terminal::escape(&t.shown.display().to_string()).into_owned();
        note(&format!(
            "mldebug run: trace kept in {shown} (mldebug doctor {shown} judges it again)"
        ));
    }
    let processes = traces::parse(&collected.text)?;
    let failed_alone = !ended.timed_out
        && ended.interrupted.is_none()
        && ended.status.is_some_and(|s| !s.success());
    if processes.is_empty() && !ended.timed_out && ended.interrupted.is_none() {
        if let Some(e) = &trace_error {
            note(&format!("mldebug run: {e}"));
        }
        return Err(nothing_observed(
            &args.command,
            failed_alone,
            ended,
            (collected.started, collected.imported_torch),
        ));
    }
    let catalog = crate::catalog::open(g)?;
    let asked = report::Asked {
        argv: &args.command,
        steps: args.steps,
        trace: target
            .as_ref()
            .filter(|_| trace_error.is_none())
            .map(|t| t.shown.as_path()),
        trace_error: trace_error.as_ref().map(|e| e.message.clone()),
    };
    let report = report::build(asked, &processes, &ended, &catalog);
    if g.json() {
        emit_json(&json::to_string("run", &report)?)?;
    } else {
        emit(
            &render::render(&report, Style::from(g.stdout)),
            Style::from(g.stdout).colour,
        )?;
    }
    if let Some(e) = trace_error {
        return Err(e);
    }
    Ok(exit_for(&ended, failed_alone, report.counts.fail))
}

/// The exit status of a judged run: how it ended comes first (interrupted, timed out, failed
/// on its own), then the findings.
fn exit_for(ended: &launch::Ended, failed_alone: bool, fails: usize) -> Exit {
    match ended.interrupted {
        #[cfg(unix)]
        Some(libc::SIGTERM) => Exit::Terminated,
        #[cfg(unix)]
        Some(libc::SIGHUP) => Exit::HangUp,
        Some(_) => Exit::Interrupted,
        None if ended.timed_out => Exit::TimedOut,
        None if failed_alone => Exit::ModelError,
        None if fails > 0 => Exit::Failed,
        None => Exit::Ok,
    }
}

/// No process built a model or an optimizer: the command is not a PyTorch training program, or
/// it failed before building one.
fn nothing_observed(
    words: &[String],
    failed: bool,
    ended: launch::Ended,
    (started, imported_torch): (usize, usize),
) -> Error {
    let shown = words.join(" ");
    // How far it got, from the bootstrap's marks: no Python loaded the probes, Python never
    // imported torch, or torch was imported and nothing trained.
    let how_far = match (started, imported_torch) {
        (0, _) => "no Python process loaded the probes (not Python, or a Python started with \
                   -E, -I or -S, or with PYTHONPATH cleared, inside a wrapper?)"
            .to_string(),
        (n, 0) => format!("{n} Python process(es) started, none imported torch"),
        (_, n) => format!(
            "{n} process(es) imported torch, but none built a model that ran forward or an \
             optimizer"
        ),
    };
    if failed {
        let status = ended
            .status
            .map(crate::child_process::describe)
            .unwrap_or_else(|| "an unknown status".into());
        return Error::model(format!(
            "`{shown}` ended with {status} before it built a PyTorch model or optimizer \
             ({how_far}; its own output above says why)"
        ));
    }
    Error::usage(format!(
        "`{shown}` ran, but nothing was observed: {how_far}. mldebug run watches Python \
         training programs that import torch (MLDEBUG_RUN_DEBUG=1 shows what start-up decided \
         in each Python process)"
    ))
}
