//! Run the built harness as a child process and read its report back.
//!
//! The child gets its own process group, so a timeout kills it and anything it started. Its
//! stdout goes to our stderr (our stdout may be carrying `--json`); its stderr is read in
//! bounded lines, and never waited on past [`child_process::DRAIN_GRACE`] after the child ended
//! (a process the model started may hold it open): progress lines drive a progress bar (only on
//! a terminal), the identity line says which model the binary was built for (checked against
//! this run's, see `identity`), the rest is kept so that a crash can be shown with the child's
//! last words.

use mldebug_diagnostics::harness::{
    estimate_from_json, report_from_json, ProgressLine, Request, MODEL_ERROR_PREFIX,
    PROGRESS_PREFIX, REFUSAL_EXIT, REFUSAL_PREFIX, REPORT_ENV, REQUEST_ENV,
};
use mldebug_diagnostics::report::Subject;
use mldebug_diagnostics::{Finding, Report, Status};
use mldebug_memory::measured::ModelEstimate;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::identity::{self, Identity};
use crate::child_process::{self, Outcome, PipeReader, Tail, DRAIN_GRACE};
use crate::render::progress::{child_bar, child_step};
use crate::{Error, Result};

/// How many of the child's last stderr lines a crash report keeps: a panic message and its
/// backtrace head fit.
pub const CRASH_TAIL_LINES: usize = 20;
/// The longest stderr line read whole: a progress line (a few hundred bytes) fits; a longer
/// one is cut here, and shorter again in the tail.
const MAX_STDERR_LINE: usize = 64 * 1024;

/// How to run the harness.
pub struct RunPlan<'a> {
    pub exe: &'a Path,
    pub request: &'a Request,
    /// Where the child writes the report: this run's own file (removed first, so a stale one
    /// is never read, and once read).
    pub report_path: PathBuf,
    /// What the binary must announce; any other report is refused.
    pub identity: &'a Identity,
    pub cwd: &'a Path,
    /// `--timeout`: the harness stops its checks at this point itself; it is killed
    /// [`super::TIMEOUT_GRACE`] later if it has not exited.
    pub timeout: Duration,
    /// Draw progress on stderr.
    pub progress: bool,
}

/// Run the harness; a report always comes back unless the request itself was refused (a bad
/// `--device`, exit 2). A crash or a timeout becomes an `error` finding per requested check.
pub fn run(plan: &RunPlan) -> Result<Report> {
    match run_child(plan)? {
        Ran::Wrote(text) => report_from_json(&text).map_err(|e| unreadable(plan, &e)),
        Ran::Nothing { why, tail } => Ok(crashed_report(plan.request, &why, &tail)),
    }
}

/// Run the harness for the model's memory estimate (`mldebug memory --model crate::Net`). A
/// crash or a timeout is the model's error (exit 4), with the child's last lines.
pub fn run_estimate(plan: &RunPlan) -> Result<ModelEstimate> {
    match run_child(plan)? {
        Ran::Wrote(text) => estimate_from_json(&text).map_err(|e| unreadable(plan, &e)),
        Ran::Nothing { why, tail } => {
            let model = &plan.request.model;
            if let Some(reason) = tail.iter().find_map(|l| l.strip_prefix(MODEL_ERROR_PREFIX)) {
                return Err(Error::model(format!(
                    "{model}: estimating its memory: {reason}"
                )));
            }
            let mut message = format!("{model}: estimating its memory: {why}");
            for line in &tail {
                message.push_str("\n    ");
                message.push_str(line);
            }
            Err(Error::model(message))
        }
    }
}

fn unreadable(plan: &RunPlan, e: &str) -> Error {
    Error::internal(format!(
        "{}: the harness wrote a document this mldebug cannot read: {e}",
        plan.report_path.display()
    ))
}

/// How a harness run ended.
enum Ran {
    /// It wrote its document (a report, or an estimate).
    Wrote(String),
    /// It wrote nothing: why, and its last lines on stderr.
    Nothing { why: String, tail: Vec<String> },
}

/// Start the harness, wait for it (with the timeout), and read what it wrote. A refused
/// request (exit 2) is a usage error.
fn run_child(plan: &RunPlan) -> Result<Ran> {
    let _ = std::fs::remove_file(&plan.report_path);
    let request = serde_json::to_string(plan.request)
        .map_err(|e| Error::internal(format!("request: {e}")))?;
    let stdout_to_stderr: Stdio = std::io::stderr()
        .as_fd()
        .try_clone_to_owned()
        .map(Stdio::from)
        .unwrap_or_else(|_| Stdio::inherit());
    let mut command = Command::new(plan.exe);
    command
        .current_dir(plan.cwd)
        .env(REQUEST_ENV, request)
        .env(REPORT_ENV, &plan.report_path)
        .stdin(Stdio::null())
        .stdout(stdout_to_stderr)
        .stderr(Stdio::piped());
    child_process::own_group(&mut command);
    let started = Instant::now();
    let mut child = command
        .spawn()
        .map_err(|e| Error::internal(format!("cannot start {}: {e}", plan.exe.display())))?;

    let stderr = child.stderr.take().expect("stderr is piped");
    let bar = plan.progress.then(|| child_bar(plan.request.checks.len()));
    let state = Stderr::new(bar.clone());
    let reader = PipeReader::spawn(stderr, MAX_STDERR_LINE, false, state, Stderr::line);

    let outcome = child_process::wait(&mut child, started, plan.timeout + super::TIMEOUT_GRACE)
        .map_err(|e| Error::internal(format!("waiting for the harness: {e}")))?;
    let (state, _) = reader.finish(Instant::now() + DRAIN_GRACE);
    let (tail, announced) =
        state.map_or_else(Default::default, |s| (s.tail.into_lines(), s.announced));
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let written = std::fs::read_to_string(&plan.report_path);
    let _ = std::fs::remove_file(&plan.report_path);
    identity::verify(plan.identity, announced.as_deref(), written.is_ok())?;

    if let Outcome::Exited(status) = outcome {
        if let Ok(text) = written {
            return Ok(Ran::Wrote(text));
        }
        if status.code() == Some(REFUSAL_EXIT) {
            if let Some(reason) = tail.iter().find_map(|l| l.strip_prefix(REFUSAL_PREFIX)) {
                return Err(Error::usage(reason.to_string()));
            }
        }
    }
    let why = match outcome {
        Outcome::TimedOut => format!(
            "timed out after {}s (--timeout) and was stopped: the model did not finish",
            plan.timeout.as_secs()
        ),
        Outcome::Exited(status) => format!(
            "the model crashed before the checks finished ({}); its last lines on stderr are below",
            child_process::describe(status)
        ),
    };
    Ok(Ran::Nothing { why, tail })
}

/// A report for a run that produced none: every requested check is an `error` naming why.
pub fn crashed_report(request: &Request, why: &str, tail: &[String]) -> Report {
    let which = match request.checks.as_slice() {
        [one] => one.to_string(),
        _ => "all".to_string(),
    };
    let rerun = format!(
        "{} --seed {}",
        Subject::candle(&request.model, &request.flags).command(&which),
        request.seed
    );
    Report {
        model: request.model.clone(),
        device: request.device.clone(),
        seed: request.seed,
        checks: request
            .checks
            .iter()
            .map(|&check| Finding {
                check,
                status: Status::Error,
                summary: why.to_string(),
                metrics: Default::default(),
                details: tail.to_vec(),
                entry: check.entry().to_string(),
                next: rerun.clone(),
                series: Vec::new(),
            })
            .collect(),
    }
}

/// What the harness said on stderr besides progress.
struct Stderr {
    /// Its last lines.
    tail: Tail,
    /// The identity it announced first, if any.
    announced: Option<String>,
    bar: Option<indicatif::ProgressBar>,
}

impl Stderr {
    fn new(bar: Option<indicatif::ProgressBar>) -> Stderr {
        Stderr {
            tail: Tail::new(CRASH_TAIL_LINES),
            announced: None,
            bar,
        }
    }

    /// One line: the identity, a progress line for the bar, or a line for the tail.
    fn line(&mut self, line: &[u8], _cut: bool) {
        let line = String::from_utf8_lossy(line);
        if self.announced.is_none() {
            if let Some(id) = identity::announced(&line) {
                self.announced = Some(id.to_string());
                return;
            }
        }
        if let Some(json) = line.strip_prefix(PROGRESS_PREFIX) {
            if let (Some(bar), Ok(p)) = (&self.bar, serde_json::from_str::<ProgressLine>(json)) {
                bar.set_position(p.index as u64);
                child_step(bar, p.check.as_str(), p.step, p.total, p.loss);
            }
            return;
        }
        self.tail.push(line.into_owned());
    }
}
