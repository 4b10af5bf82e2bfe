//! Start the user's interpreter with the embedded driver, send the request, read the lines.
//!
//! The driver runs as `python -c <bootstrap>` in its own process group, nothing written to
//! disk: stdin carries first one JSON line with the sources of the package
//! `torch/driver/mldebug_driver/` (embedded at build time; `torch/driver/bootstrap.py` imports
//! them from memory), then the request. Its stdout carries only JSON lines, each with the run's
//! nonce; its stderr (the user's prints, warnings, a traceback) is kept as a bounded tail for
//! error messages. What went wrong at start-up is read from the driver's `fatal` event, never
//! from its exit code, which the user's code can set too. Neither pipe is waited on past the
//! time limit: a process the model started can hold them open (`child_process`).

use super::events::{self, CheckEvent, Event, Fatal, FatalKind, Hello, CONTRACT};
use super::replay;
use super::TorchSettings;
use crate::child_process::{self, Outcome, PipeReader, Tail, DRAIN_GRACE, TAIL_LINE_BYTES};
use crate::render::progress::{child_bar, child_step};
use crate::{Error, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::time::Instant;

include!(concat!(env!("OUT_DIR"), "/embedded_torch_driver.rs"));

/// The program `python -c` runs: it reads the package's sources from stdin's first line and
/// imports the driver from them.
const BOOTSTRAP: &str = include_str!("../../torch/driver/bootstrap.py");
/// The driver's package name: the bootstrap serves it and its submodules from memory.
const PACKAGE: &str = "mldebug_driver";
/// How the sources line begins (`{"package":"mldebug_driver",...`): a program that echoes its
/// stdin (not a Python) prints it back, and the error shows it as one short line.
const SOURCES_START: &str = "{\"package\":";

/// How many of the driver's last stderr lines an error keeps.
pub const TAIL_LINES: usize = 20;
/// The longest stdout line read (a measurement with every target of a big batch is well under).
const MAX_LINE: usize = 64 << 20;

/// What the driver said.
#[derive(Debug, Default)]
pub struct Run {
    pub hello: Option<Hello>,
    pub checks: Vec<CheckEvent>,
    /// How the run ended, for the checks it never reported ("timed out ...", "crashed ...").
    pub ended: String,
    /// The last lines of its stderr (and any stray stdout), or the traceback of the user's
    /// code when it raised at start-up.
    pub tail: Vec<String>,
}

/// The request on the driver's stdin (`torch/CONTRACT.md`).
#[derive(Serialize)]
struct Request<'a> {
    contract: u32,
    nonce: &'a str,
    target: &'a super::target::Target,
    lora: Option<&'a super::target::Lora>,
    checks: Vec<&'static str>,
    seed: u64,
    /// Only for more than one seed: a single-seed request is as it always was.
    #[serde(skip_serializing_if = "Option::is_none")]
    seeds: Option<&'a [u64]>,
    steps: usize,
    learning_rate: f64,
    device: &'a str,
}

impl<'a> Request<'a> {
    /// The request for `s`'s plan: its checks, its seeds (the first as `seed`), its steps and
    /// device.
    fn new(s: &'a TorchSettings, nonce: &'a str) -> Request<'a> {
        let plan = &s.plan;
        Request {
            contract: CONTRACT,
            nonce,
            target: &s.target,
            lora: s.lora.as_ref(),
            checks: plan.checks.iter().map(|c| c.as_str()).collect(),
            seed: plan.seeds.first().copied().unwrap_or_default(),
            seeds: (plan.seeds.len() > 1).then_some(plan.seeds.as_slice()),
            steps: plan.steps,
            learning_rate: s.learning_rate,
            device: &plan.device,
        }
    }
}

/// Stdin's first line: the driver package's sources, `{"package": PACKAGE, "files": {path: text}}`
/// (paths relative to the package folder, as `torch/driver/bootstrap.py` reads them).
#[derive(Serialize)]
struct Sources {
    package: &'static str,
    files: BTreeMap<&'static str, &'static str>,
}

/// The sources line, ending in a newline.
fn sources_line() -> Result<String> {
    let sources = Sources {
        package: PACKAGE,
        files: DRIVER_PACKAGE.iter().copied().collect(),
    };
    let mut line = serde_json::to_string(&sources)
        .map_err(|e| Error::internal(format!("the driver's sources: {e}")))?;
    line.push('\n');
    Ok(line)
}

/// Writes the sources and the request on a thread of its own: together they are more than a
/// pipe holds, and a program that never reads its stdin must not keep the run from its time
/// limit. The thread ends when the child has read everything or its stdin is closed (killed,
/// exited); it is not waited for.
fn send_stdin(stdin: Option<ChildStdin>, sources: String, request: String) {
    let Some(mut stdin) = stdin else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("torch-driver-stdin".into())
        .spawn(move || {
            // A driver that died at once closes its stdin: the error shows in how it ended.
            let _ = stdin
                .write_all(sources.as_bytes())
                .and_then(|()| stdin.write_all(request.as_bytes()));
        });
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

/// A value no line of the user's code holds by accident: std's randomly keyed hasher over the
/// clock and the process id, and the clock.
fn nonce() -> String {
    use std::hash::{BuildHasher, Hasher};
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(nanos);
    h.write_u32(std::process::id());
    format!("{:016x}{nanos:x}", h.finish())
}

/// What the stdout reader collects.
struct Stdout {
    events: Vec<Event>,
    stray: Tail,
    bar: Option<indicatif::ProgressBar>,
    nonce: String,
    /// Every line as read, when the run is to be kept ([`replay`]).
    lines: Option<Vec<String>>,
}

/// Runs the driver to the end (or the time limit) and collects its events.
pub fn run(s: &TorchSettings) -> Result<Run> {
    let python = interpreter(s.python.as_ref());
    let nonce = nonce();
    let request = |nonce: &str| {
        serde_json::to_string(&Request::new(s, nonce))
            .map_err(|e| Error::internal(format!("the driver request: {e}")))
    };
    let sources = sources_line()?;
    let without_nonce = request("")?;
    let kept = replay::kept(&sources, &without_nonce, &python, &s.target);
    if let Some(lines) = kept
        .as_deref()
        .and_then(|k| replay::read(k, &nonce, &without_nonce))
    {
        return replayed(&lines, nonce, &python, s);
    }
    let request = request(&nonce)?;
    let mut command = Command::new(&python);
    command
        .arg("-c")
        .arg(BOOTSTRAP)
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONIOENCODING", "utf-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(n) = s.threads {
        command.env("OMP_NUM_THREADS", n.to_string());
    }
    crate::candle_threads::hide_from(&mut command);
    child_process::own_group(&mut command);
    let started = Instant::now();
    let mut child = command.spawn().map_err(|e| {
        Error::usage(format!(
            "cannot start the Python interpreter `{}`: {e}; pass --python PATH (or set MLDEBUG_PYTHON) to one that has torch",
            python.display()
        ))
    })?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let progress = s
        .progress
        .then(|| child_bar(s.plan.checks.len() * s.plan.seeds.len()));
    let state = Stdout {
        events: Vec::new(),
        stray: Tail::new(TAIL_LINES),
        bar: progress.clone(),
        nonce: nonce.clone(),
        lines: kept.is_some().then(Vec::new),
    };
    let out_reader = PipeReader::spawn(stdout, MAX_LINE, false, state, read_stdout_line);
    let err_reader = PipeReader::spawn(
        stderr,
        TAIL_LINE_BYTES,
        true,
        Tail::new(TAIL_LINES),
        |tail: &mut Tail, line: &[u8], _| tail.push(String::from_utf8_lossy(line).into_owned()),
    );
    send_stdin(child.stdin.take(), sources, request);
    // One process for every seed: the limit is the plan's for each of them.
    let outcome = child_process::wait(&mut child, started, s.plan.timeout_for_every_seed())
        .map_err(|e| Error::internal(format!("waiting for the torch driver: {e}")))?;
    let deadline = Instant::now() + DRAIN_GRACE;
    let (out, _) = out_reader.finish(deadline);
    let (err, _) = err_reader.finish(deadline);
    let (events, stray, lines) = out.map_or_else(Default::default, |o| {
        (o.events, o.stray.into_lines(), o.lines)
    });
    let ended_well = matches!(outcome, Outcome::Exited(st) if st.success())
        && events.iter().any(|e| matches!(e, Event::Done))
        && !events.iter().any(|e| matches!(e, Event::Fatal(_)));
    if let (Some(path), Some(lines), true) = (&kept, &lines, ended_well) {
        replay::keep(path, &nonce, &without_nonce, lines);
    }
    let mut tail = err.map(Tail::into_lines).unwrap_or_default();
    tail.extend(stray);
    let excess = tail.len().saturating_sub(TAIL_LINES);
    tail.drain(..excess);
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    collect(events, outcome, &python, s, tail)
}

/// A kept run's lines read as the driver's ([`replay`]).
fn replayed(lines: &[String], nonce: String, python: &Path, s: &TorchSettings) -> Result<Run> {
    let mut out = Stdout {
        events: Vec::new(),
        stray: Tail::new(TAIL_LINES),
        bar: None,
        nonce,
        lines: None,
    };
    for line in lines {
        read_stdout_line(&mut out, line.as_bytes(), false);
    }
    let ended = Outcome::Exited(std::os::unix::process::ExitStatusExt::from_raw(0));
    collect(out.events, ended, python, s, out.stray.into_lines())
}

fn collect(
    events: Vec<Event>,
    outcome: Outcome,
    python: &Path,
    s: &TorchSettings,
    tail: Vec<String>,
) -> Result<Run> {
    let mut run = Run::default();
    let (mut done, mut started, mut fatal) = (false, false, None);
    for event in events {
        match event {
            Event::Started(_) => started = true,
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
            Event::Fatal(f) => fatal = Some(f),
            Event::Done => done = true,
        }
    }
    run.tail = tail;
    if let Some(f) = fatal {
        return fatal_error(f, python, &mut run).map(|()| run);
    }
    let py = python.display();
    run.ended = match outcome {
        Outcome::TimedOut if !started => format!(
            "timed out after {}s (--timeout) and was stopped; `{py}` never started mldebug's driver: is it a Python interpreter?",
            s.plan.timeout_for_every_seed().as_secs()
        ),
        Outcome::TimedOut => format!(
            "timed out after {}s (--timeout) and was stopped: the model did not finish",
            s.plan.timeout_for_every_seed().as_secs()
        ),
        Outcome::Exited(status) if done && status.success() => String::new(),
        Outcome::Exited(status) if !started => {
            return Err(Error::usage(with_tail(
                format!(
                    "--python {py}: not a Python interpreter that runs mldebug's driver (Python 3.9 or later): it ended ({}) without starting it",
                    child_process::describe(status)
                ),
                &run.tail,
            )));
        }
        Outcome::Exited(status) if run.hello.is_none() => format!(
            "the program exited ({}) before the model was built: while importing the model's file or in build(), outside the driver's control; its last lines on stderr are below",
            child_process::describe(status)
        ),
        Outcome::Exited(status) => format!(
            "the torch driver stopped before this check ({}); its last lines on stderr are below",
            child_process::describe(status)
        ),
    };
    Ok(run)
}

/// The driver's `fatal` event: an error of the CLI's kind, or for an error of the user's code
/// the run's end (every check an `error` with the traceback, exit 4).
fn fatal_error(f: Fatal, python: &Path, run: &mut Run) -> Result<()> {
    let py = python.display();
    match f.kind {
        FatalKind::UserCode => {
            run.ended = f.message;
            if !f.traceback.is_empty() {
                run.tail = f.traceback;
            }
            Ok(())
        }
        FatalKind::NoTorch => Err(Error::usage(format!(
            "{py} cannot import torch: install it there (`{py} -m pip install torch`) or pass --python with an interpreter that has it\n  {}",
            f.message
        ))),
        FatalKind::Target => Err(Error::usage(with_tail(
            format!("the model could not be loaded: {}", f.message),
            &f.traceback,
        ))),
        FatalKind::Request => Err(Error::internal(format!(
            "the torch driver refused this mldebug's request (a bug in mldebug): {}",
            f.message
        ))),
    }
}

fn with_tail(mut message: String, tail: &[String]) -> String {
    for line in tail {
        message.push_str("\n  ");
        message.push_str(line);
    }
    message
}

/// One stdout line: an event of this run, or a stray line the user's code wrote.
fn read_stdout_line(out: &mut Stdout, line: &[u8], cut: bool) {
    let line = String::from_utf8_lossy(line);
    if cut {
        out.stray.push(format!(
            "(a stdout line longer than {MAX_LINE} bytes, cut: {})",
            line.chars().take(80).collect::<String>()
        ));
        return;
    }
    if let Some(lines) = &mut out.lines {
        lines.push(line.to_string());
    }
    match events::parse(&line, &out.nonce) {
        Some(Ok(event)) => {
            if let (Some(bar), Event::Progress(p)) = (&out.bar, &event) {
                child_step(bar, p.check.as_str(), p.done, p.total, p.loss);
            }
            if let (Some(bar), Event::Check(_)) = (&out.bar, &event) {
                bar.inc(1);
            }
            out.events.push(event);
        }
        Some(Err(e)) => out.stray.push(format!("(unreadable driver line: {e})")),
        None if line.starts_with(SOURCES_START) => {
            out.stray
                .push("(the driver's sources, echoed back)".to_string());
        }
        None => out.stray.push(line.trim_end().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_package_is_embedded_with_its_entry_and_without_tests() {
        let paths: Vec<&str> = DRIVER_PACKAGE.iter().map(|f| f.0).collect();
        for entry in ["__init__.py", "main.py", "checks/__init__.py"] {
            assert!(paths.contains(&entry), "{paths:?}");
        }
        assert!(paths
            .iter()
            .all(|p| p.ends_with(".py") && !p.contains("tests/")));
    }

    #[test]
    fn the_sources_line_is_one_json_line_the_bootstrap_reads() {
        let line = sources_line().unwrap();
        assert!(line.starts_with(SOURCES_START) && line.ends_with('\n'));
        assert_eq!(line.matches('\n').count(), 1);
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["package"], PACKAGE);
        assert_eq!(
            value["files"].as_object().map(|f| f.len()),
            Some(DRIVER_PACKAGE.len())
        );
    }

    #[test]
    fn a_sources_line_echoed_back_is_one_short_stray_line() {
        let mut out = Stdout {
            events: Vec::new(),
            stray: Tail::new(TAIL_LINES),
            bar: None,
            nonce: "n".into(),
            lines: None,
        };
        let line = sources_line().unwrap();
        read_stdout_line(&mut out, line.trim_end().as_bytes(), false);
        assert_eq!(
            out.stray.into_lines(),
            ["(the driver's sources, echoed back)"]
        );
        assert!(out.events.is_empty());
    }
}
