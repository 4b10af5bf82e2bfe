//! Run the built harness as a child process and read its report back.
//!
//! The child gets its own process group, so a timeout kills it and anything it started. Its
//! stdout goes to our stderr (our stdout may be carrying `--json`); its stderr is read line by
//! line: progress lines drive a progress bar (only on a terminal), the rest is kept so that a
//! crash can be shown with the child's last words.

use mldebug_diagnostics::harness::{
    report_from_json, ProgressLine, Request, PROGRESS_PREFIX, REFUSAL_EXIT, REFUSAL_PREFIX,
    REPORT_ENV, REQUEST_ENV,
};
use mldebug_diagnostics::{Finding, Report, Status};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::os::fd::AsFd;
#[cfg(unix)]
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::{Error, Result};

/// How many of the child's last stderr lines a crash report keeps: a panic message and its
/// backtrace head fit.
pub const CRASH_TAIL_LINES: usize = 20;
/// How often the parent looks at the child while waiting.
const POLL: Duration = Duration::from_millis(50);

/// How to run the harness.
pub struct RunPlan<'a> {
    pub exe: &'a Path,
    pub request: &'a Request,
    /// Where the child writes the report (removed first, so a stale one is never read).
    pub report_path: PathBuf,
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
    // Its own process group, so a timeout kills everything it started (Unix only; elsewhere
    // the timeout kills the harness process itself).
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command
        .spawn()
        .map_err(|e| Error::internal(format!("cannot start {}: {e}", plan.exe.display())))?;

    let stderr = child.stderr.take().expect("stderr is piped");
    let bar = plan
        .progress
        .then(|| progress_bar(plan.request.checks.len()));
    let bar_for_reader = bar.clone();
    let reader = std::thread::spawn(move || read_stderr(stderr, bar_for_reader.as_ref()));

    let started = Instant::now();
    let outcome = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Outcome::Exited(status),
            Ok(None) if started.elapsed() >= plan.timeout + super::TIMEOUT_GRACE => {
                kill_group(child.id());
                let _ = child.kill();
                let _ = child.wait();
                break Outcome::TimedOut;
            }
            Ok(None) => std::thread::sleep(POLL),
            Err(e) => return Err(Error::internal(format!("waiting for the harness: {e}"))),
        }
    };
    let tail = reader.join().unwrap_or_default();
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }

    if let Outcome::Exited(status) = outcome {
        if let Ok(text) = std::fs::read_to_string(&plan.report_path) {
            return report_from_json(&text).map_err(|e| {
                Error::internal(format!(
                    "{}: the harness wrote a report this mldebug cannot read: {e}",
                    plan.report_path.display()
                ))
            });
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
            describe(status)
        ),
    };
    Ok(crashed_report(plan.request, &why, &tail))
}

enum Outcome {
    Exited(ExitStatus),
    TimedOut,
}

/// A report for a run that produced none: every requested check is an `error` naming why.
pub fn crashed_report(request: &Request, why: &str, tail: &[String]) -> Report {
    let which = match request.checks.as_slice() {
        [one] => one.to_string(),
        _ => "all".to_string(),
    };
    let rerun = format!(
        "{} --seed {}",
        mldebug_diagnostics::report::check_command(&which, &request.model),
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

fn describe(status: ExitStatus) -> String {
    #[cfg(unix)]
    let signal = status.signal();
    #[cfg(not(unix))]
    let signal: Option<i32> = None;
    match (status.code(), signal) {
        (Some(101), _) => "it panicked: exit status 101".to_string(),
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(9)) => "killed by signal 9, often the out-of-memory killer".to_string(),
        (None, Some(s)) => format!("killed by signal {s}"),
        _ => status.to_string(),
    }
}

/// Without process groups, the child alone is killed (by the caller).
#[cfg(not(unix))]
fn kill_group(_pid: u32) {}

/// Kill the child's whole process group (the child leads it: its pgid is its pid).
#[cfg(unix)]
fn kill_group(pid: u32) {
    // std has no killpg; kill(1) with a negative pid signals the group.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

fn read_stderr(
    stderr: std::process::ChildStderr,
    bar: Option<&indicatif::ProgressBar>,
) -> Vec<String> {
    let mut tail: VecDeque<String> = VecDeque::with_capacity(CRASH_TAIL_LINES + 1);
    for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
        if let Some(json) = line.strip_prefix(PROGRESS_PREFIX) {
            if let (Some(bar), Ok(p)) = (bar, serde_json::from_str::<ProgressLine>(json)) {
                show(bar, &p);
            }
            continue;
        }
        tail.push_back(line);
        if tail.len() > CRASH_TAIL_LINES {
            tail.pop_front();
        }
    }
    tail.into()
}

fn progress_bar(checks: usize) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(checks as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{pos}/{len}] {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

fn show(bar: &indicatif::ProgressBar, p: &ProgressLine) {
    bar.set_position(p.index as u64);
    let loss = p.loss.map(|l| format!("  loss {l:.4}")).unwrap_or_default();
    bar.set_message(format!("{}  step {}/{}{loss}", p.check, p.step, p.total));
}
