//! Start the user's interpreter with the embedded driver, send the request, read the lines.
//!
//! The driver runs as `python -c <driver>` (nothing is written to disk) in its own process
//! group with the request on stdin. Its stdout carries only JSON lines; its stderr (the user's
//! prints, warnings, a traceback) is kept as a bounded tail for error messages.

use super::events::{self, CheckEvent, Event, Hello, CONTRACT};
use super::{TorchSettings, DRIVER};
use crate::child_process::{self, Outcome, Tail};
use crate::render::progress::{child_bar, child_step};
use crate::{Error, Result};
use serde::Serialize;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

/// The driver's exit code when the model file or NAME cannot be loaded.
pub const EXIT_BAD_MODEL: i32 = 3;
/// ... when `import torch` fails.
pub const EXIT_NO_TORCH: i32 = 4;
/// How many of the driver's last stderr lines an error keeps.
pub const TAIL_LINES: usize = 20;
/// The longest stdout line read (a measurement with every target of a big batch is well under).
const MAX_LINE: u64 = 64 << 20;

/// What the driver said.
#[derive(Debug, Default)]
pub struct Run {
    pub hello: Option<Hello>,
    pub checks: Vec<CheckEvent>,
    /// How the run ended, for the checks it never reported ("timed out ...", "crashed ...").
    pub ended: String,
    /// The last lines of its stderr (and any stray stdout).
    pub tail: Vec<String>,
}

/// The request on the driver's stdin (`torch/CONTRACT.md`).
#[derive(Serialize)]
struct Request<'a> {
    contract: u32,
    target: &'a super::target::Target,
    lora: Option<&'a super::target::Lora>,
    checks: Vec<&'static str>,
    seed: u64,
    steps: usize,
    learning_rate: f64,
    device: &'a str,
}

/// The interpreter: `--python`, `$MLDEBUG_PYTHON`, the active virtualenv's, or `python3`.
pub fn interpreter(explicit: Option<&PathBuf>) -> PathBuf {
    if let Some(p) = explicit {
        return p.clone();
    }
    if let Some(p) = std::env::var_os("MLDEBUG_PYTHON").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(venv).join("bin").join("python");
        if p.is_file() {
            return p;
        }
    }
    PathBuf::from("python3")
}

/// Runs the driver to the end (or the time limit) and collects its events.
pub fn run(s: &TorchSettings) -> Result<Run> {
    let python = interpreter(s.python.as_ref());
    let request = Request {
        contract: CONTRACT,
        target: &s.target,
        lora: s.lora.as_ref(),
        checks: s.checks.iter().map(|c| c.as_str()).collect(),
        seed: s.seed,
        steps: s.steps,
        learning_rate: s.learning_rate,
        device: &s.device,
    };
    let request = serde_json::to_string(&request)
        .map_err(|e| Error::internal(format!("the driver request: {e}")))?;
    let mut command = Command::new(&python);
    command
        .arg("-c")
        .arg(DRIVER)
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONIOENCODING", "utf-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(n) = s.threads {
        command.env("OMP_NUM_THREADS", n.to_string());
    }
    child_process::own_group(&mut command);
    let started = Instant::now();
    let mut child = command.spawn().map_err(|e| {
        Error::usage(format!(
            "cannot start the Python interpreter `{}`: {e}; pass --python PATH (or set MLDEBUG_PYTHON) to one that has torch",
            python.display()
        ))
    })?;
    if let Some(mut stdin) = child.stdin.take() {
        // A driver that died at once closes its stdin: the error shows in its exit code.
        let _ = stdin.write_all(request.as_bytes());
    }
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let progress = s.progress.then(|| child_bar(s.checks.len()));
    let bar = progress.clone();
    let out_reader = std::thread::spawn(move || read_stdout(stdout, bar.as_ref()));
    let err_reader = std::thread::spawn(move || tail_of(stderr));
    let outcome = child_process::wait(&mut child, started, s.timeout)
        .map_err(|e| Error::internal(format!("waiting for the torch driver: {e}")))?;
    let (events, stray) = out_reader.join().unwrap_or_default();
    let mut tail = err_reader.join().unwrap_or_default();
    tail.extend(stray);
    let excess = tail.len().saturating_sub(TAIL_LINES);
    tail.drain(..excess);
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    collect(events, outcome, &python, s, tail)
}

fn collect(
    events: Vec<Event>,
    outcome: Outcome,
    python: &std::path::Path,
    s: &TorchSettings,
    tail: Vec<String>,
) -> Result<Run> {
    let mut run = Run::default();
    let mut done = false;
    for event in events {
        match event {
            Event::Hello(h) => {
                if h.contract != CONTRACT {
                    return Err(Error::internal(format!(
                        "the torch driver speaks contract {}, this mldebug {CONTRACT}",
                        h.contract
                    )));
                }
                run.hello = Some(h);
            }
            Event::Check(c) => run.checks.push(c),
            Event::Progress(_) => {}
            Event::Done => done = true,
        }
    }
    run.ended = match outcome {
        Outcome::TimedOut => format!(
            "timed out after {}s (--timeout) and was stopped: the model did not finish",
            s.timeout.as_secs()
        ),
        Outcome::Exited(status) if done && status.success() => String::new(),
        Outcome::Exited(status) => {
            if run.hello.is_none() {
                let py = python.display().to_string();
                if let Some(e) = super::startup_error(status.code(), &py, &tail) {
                    return Err(e);
                }
            }
            format!(
                "the torch driver stopped before this check ({}); its last lines on stderr are below",
                child_process::describe(status)
            )
        }
    };
    run.tail = tail;
    Ok(run)
}

/// Reads event lines (each at most [`MAX_LINE`] bytes); lines that are not events are kept
/// apart (the user's code wrote to stdout).
fn read_stdout(
    stdout: std::process::ChildStdout,
    bar: Option<&indicatif::ProgressBar>,
) -> (Vec<Event>, Vec<String>) {
    let mut reader = BufReader::new(stdout);
    let mut events = Vec::new();
    let mut stray = Tail::new(TAIL_LINES);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.by_ref().take(MAX_LINE).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&buf);
        match events::parse(&line) {
            Some(Ok(event)) => {
                if let (Some(bar), Event::Progress(p)) = (bar, &event) {
                    child_step(bar, p.check.as_str(), p.done, p.total, p.loss);
                }
                if let (Some(bar), Event::Check(_)) = (bar, &event) {
                    bar.inc(1);
                }
                events.push(event);
            }
            Some(Err(e)) => stray.push(format!("(unreadable driver line: {e})")),
            None => stray.push(line.trim_end().to_string()),
        }
    }
    (events, stray.into_lines())
}

/// The last [`TAIL_LINES`] lines of a stream (each cut at 4 KB).
fn tail_of(stream: impl Read) -> Vec<String> {
    let mut tail = Tail::new(TAIL_LINES);
    for line in BufReader::new(stream).split(b'\n').map_while(|l| l.ok()) {
        let mut line = String::from_utf8_lossy(&line).into_owned();
        if line.len() > 4096 {
            let mut cut = 4096;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
        }
        tail.push(line);
    }
    tail.into_lines()
}
