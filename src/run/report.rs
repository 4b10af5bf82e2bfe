//! What `mldebug run` reports: the command, how it ended, each process watched, and the trace's
//! judgement as a doctor run report (findings linked to PLAYBOOK rows). Built once; the text
//! and JSON renderers read it.

use super::launch::Ended;
use super::window::{Steps, CYCLE_CAP_SECONDS, CYCLE_CAP_STEPS, VERDICT_STEP};
use crate::catalog::Catalog;
use crate::doctor::report::{Counts, RunReport};
use crate::doctor::trace_report;
use mldebug_doctor::trace::Process;
use serde::Serialize;

/// The `run` document (inside the JSON envelope, `"command": "run"`).
#[derive(Debug, Serialize)]
pub struct Report {
    /// The command as typed after `--`.
    pub argv: Vec<String>,
    /// Optimizer steps watched per process at most (0: the whole run): a cycle window's cap,
    /// or `--steps N`.
    pub steps_limit: u64,
    /// The rule of the watched window and its caps.
    pub window: WindowRule,
    /// How the command ended.
    pub outcome: Outcome,
    /// Each process that trained (launchers and loader workers leave no trace).
    pub processes: Vec<ProcessSummary>,
    /// Where the trace was kept (`--trace`), if it was.
    pub trace: Option<String>,
    /// The findings, worst first, each with its PLAYBOOK row, and the series judged.
    #[serde(flatten)]
    pub run: RunReport,
    /// Findings by severity.
    pub counts: Counts,
}

/// How the command ended.
#[derive(Debug, Serialize)]
pub struct Outcome {
    /// `stopped` (mldebug ended it at the end of its window), `exited`, `failed`, `timed_out`,
    /// `interrupted`.
    pub how: &'static str,
    /// Its exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it (`SIGSEGV`, `SIGKILL`), or, when it was `interrupted`, the
    /// one mldebug received (`SIGINT`, `SIGTERM`).
    pub signal: Option<String>,
    /// Wall time, seconds.
    pub seconds: f64,
    /// Why `--trace` could not be kept, when it could not (the report is whole all the same).
    pub trace_error: Option<String>,
}

/// The rule of the watched window (`--steps`).
#[derive(Debug, Serialize)]
pub struct WindowRule {
    /// `cycle` (`--steps auto`: the first evaluation and the second epoch, within the caps),
    /// `steps` (`--steps N`), `whole` (`--steps 0`).
    pub rule: &'static str,
    /// The cap in optimizer steps (`null` for the whole run).
    pub cap_steps: Option<u64>,
    /// A cycle window's cap in seconds after the first step.
    pub cap_seconds: Option<u64>,
    /// A cycle window's checkpoint: a fail in its first steps ends it there.
    pub verdict_step: Option<u64>,
}

impl WindowRule {
    fn of(steps: Steps) -> WindowRule {
        match steps {
            Steps::Cycle => WindowRule {
                rule: "cycle",
                cap_steps: Some(CYCLE_CAP_STEPS),
                cap_seconds: Some(CYCLE_CAP_SECONDS),
                verdict_step: Some(VERDICT_STEP),
            },
            Steps::Fixed(0) => WindowRule {
                rule: "whole",
                cap_steps: None,
                cap_seconds: None,
                verdict_step: None,
            },
            Steps::Fixed(n) => WindowRule {
                rule: "steps",
                cap_steps: Some(n),
                cap_seconds: None,
                verdict_step: None,
            },
        }
    }
}

/// What the report says of the command line: the command, the steps watched, the trace kept.
#[derive(Debug, Clone)]
pub struct Asked<'a> {
    /// The command as typed after `--`.
    pub argv: &'a [String],
    /// `--steps`.
    pub steps: Steps,
    /// Where the trace was kept, if it was.
    pub trace: Option<&'a std::path::Path>,
    /// Why it could not be kept.
    pub trace_error: Option<String>,
}

/// One process watched.
#[derive(Debug, Serialize)]
pub struct ProcessSummary {
    /// `rank N` or `pid N`.
    pub label: String,
    pub pid: u64,
    pub rank: Option<u32>,
    /// Optimizer steps it took while watched.
    pub steps: usize,
    /// How its trace ended: `steps`, `exit`, `exception`, or `killed` (no end record).
    pub end: String,
    /// Why mldebug ended its window (`end: "steps"`): `steps` (`--steps N`), `cycle` (its first
    /// evaluation and second epoch seen), `cap_steps`, `cap_seconds`, `verdict` (a fail in the
    /// first steps); `null` when it ended otherwise.
    pub window_end: Option<String>,
    /// The step its first evaluation led to (`null`: none seen while watched).
    pub first_evaluation: Option<u64>,
    /// The step its training loader's second pass began in (`null`: not seen).
    pub second_epoch: Option<u64>,
    /// The device its model was on.
    pub device: Option<String>,
    /// Its peak memory over the watched steps, bytes: `max_memory_allocated` on CUDA, the
    /// resident set on CPU.
    pub peak_memory_bytes: Option<f64>,
    /// The share of its step time (after step 1) spent waiting for a DataLoader.
    pub data_wait_share: Option<f64>,
    /// From step `measured_from` on, its light steps were measured every `measured_every`
    /// steps (the others counted: loss, times); `null` when every step was measured.
    pub measured_every: Option<u64>,
    pub measured_from: Option<u64>,
    /// What one measurement cost against the step without it, seconds (calibration medians).
    pub measure_s: Option<f64>,
    pub step_s: Option<f64>,
}

/// The report of one run.
pub fn build(asked: Asked, processes: &[Process], ended: &Ended, catalog: &Catalog) -> Report {
    let stopped = processes
        .iter()
        .any(|p| p.end.as_ref().is_some_and(|e| e.reason == "steps"));
    let how = if ended.timed_out {
        "timed_out"
    } else if ended.interrupted.is_some() {
        "interrupted"
    } else if ended.status.is_some_and(|s| !s.success()) {
        "failed"
    } else if stopped {
        "stopped"
    } else {
        "exited"
    };
    let run = trace_report::build(&asked.argv.join(" "), "mldebug run", processes, catalog);
    let counts = trace_report::count(&run);
    let signal = ended
        .interrupted
        .or_else(|| ended.status.and_then(crate::child_process::signal_of))
        .map(|s| {
            crate::child_process::signal_name(s).map_or_else(|| format!("signal {s}"), Into::into)
        });
    Report {
        argv: asked.argv.to_vec(),
        steps_limit: asked.steps.limit(),
        window: WindowRule::of(asked.steps),
        outcome: Outcome {
            how,
            exit_code: ended.status.and_then(|s| s.code()),
            signal,
            seconds: ended.elapsed.as_secs_f64(),
            trace_error: asked.trace_error,
        },
        processes: processes
            .iter()
            .filter(|p| p.is_trainer())
            .map(|p| ProcessSummary {
                label: p.label(),
                pid: p.start.pid,
                rank: p.start.rank,
                steps: p.steps.len(),
                end: p.end.as_ref().map_or("killed".into(), |e| e.reason.clone()),
                window_end: p
                    .end
                    .as_ref()
                    .filter(|e| e.reason == "steps")
                    .map(|e| e.window.clone().unwrap_or_else(|| "steps".into())),
                first_evaluation: p.end.as_ref().and_then(|e| e.first_evaluation),
                second_epoch: p.end.as_ref().and_then(|e| e.second_epoch),
                device: p.start.device.clone(),
                peak_memory_bytes: p.peak_memory(),
                data_wait_share: p.data_wait_share(),
                measured_every: p.cadence.as_ref().map(|c| c.stride).filter(|&k| k > 1),
                measured_from: p.cadence.as_ref().filter(|c| c.stride > 1).map(|c| c.from),
                measure_s: p.cadence.as_ref().and_then(|c| c.measure_s),
                step_s: p.cadence.as_ref().and_then(|c| c.step_s),
            })
            .collect(),
        trace: asked.trace.map(|t| t.display().to_string()),
        run,
        counts,
    }
}
