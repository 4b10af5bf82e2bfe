//! Build the harness crate with `cargo build --message-format=json...`, from the user's
//! workspace root (so their `.cargo/config.toml` and toolchain apply) into their target dir (so
//! their compiled candle is reused), and collect what went wrong.

use super::classify::{self, Origin};
use super::generate::Harness;
use super::locate::UserCrate;
use crate::{Error, Result};
use cargo_metadata::diagnostic::{Diagnostic, DiagnosticLevel};
use cargo_metadata::Message;
use std::io::{BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// How to build.
#[derive(Debug, Clone)]
pub struct BuildPlan {
    pub release: bool,
    pub offline: bool,
    /// Echo cargo's own status lines (Compiling ...) to stderr as they come.
    pub echo: bool,
    /// Ask rustc for coloured diagnostics.
    pub color: bool,
}

/// How many of cargo's last stderr lines an error shows when cargo fails for a reason of its
/// own (a bad manifest, no network): enough for cargo's error and its context.
const CARGO_TAIL_LINES: usize = 30;
/// The longest line of cargo's stderr kept whole: a rendered diagnostic line is far shorter.
const CARGO_LINE_BYTES: usize = 64 * 1024;

/// Build `harness` and return the path of its executable. Compile errors in the user's crate are
/// printed as rustc renders them and end in exit 3; errors in the generated `main.rs` are
/// translated into advice about `--model` (exit 2).
pub fn build(
    harness: &Harness,
    user: &UserCrate,
    model: &str,
    plan: &BuildPlan,
) -> Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.arg("build")
        .arg("--manifest-path")
        .arg(harness.dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&user.target_dir)
        .arg("--bin")
        .arg(&harness.name)
        .arg(if plan.color {
            "--message-format=json-diagnostic-rendered-ansi"
        } else {
            "--message-format=json"
        })
        .arg(format!(
            "--color={}",
            if plan.color { "always" } else { "never" }
        ));
    if plan.release {
        cmd.arg("--release");
    }
    if plan.offline {
        cmd.arg("--offline");
    }
    cmd.current_dir(&user.workspace_root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::build(format!("cannot run cargo: {e}")))?;

    let stderr = child.stderr.take().expect("stderr is piped");
    let echo = plan.echo;
    let cargo_lines = std::thread::spawn(move || {
        let mut tail = Vec::new();
        // Bounded lines: a build script's output reaches this pipe too.
        crate::child_process::for_each_line(stderr, CARGO_LINE_BYTES, false, |line, _| {
            let line = String::from_utf8_lossy(line).into_owned();
            if echo {
                let _ = writeln!(std::io::stderr(), "{line}");
            }
            tail.push(line);
            if tail.len() > CARGO_TAIL_LINES {
                tail.remove(0);
            }
            true
        });
        tail
    });

    let stdout = child.stdout.take().expect("stdout is piped");
    let mut executable = None;
    let mut errors: Vec<(Origin, Diagnostic)> = Vec::new();
    for message in Message::parse_stream(BufReader::new(stdout)).map_while(|m| m.ok()) {
        match message {
            Message::CompilerArtifact(a) if a.target.name == harness.name => {
                executable = a.executable.map(PathBuf::from);
            }
            Message::CompilerMessage(m) if is_error(m.message.level) => {
                let origin = classify::origin(m.target.src_path.as_std_path(), harness, user);
                errors.push((origin, m.message));
            }
            _ => {}
        }
    }
    let status = child
        .wait()
        .map_err(|e| Error::build(format!("cargo: {e}")))?;
    let tail = cargo_lines.join().unwrap_or_default();
    match (status.success(), executable) {
        (true, Some(exe)) => Ok(exe),
        _ if !errors.is_empty() => Err(classify::explain(&errors, harness, user, model)),
        _ => Err(Error::build(format!(
            "cargo could not build the harness for `{}` ({}):\n{}",
            user.name,
            harness.dir.join("Cargo.toml").display(),
            tail.join("\n")
        ))),
    }
}

fn is_error(level: DiagnosticLevel) -> bool {
    matches!(level, DiagnosticLevel::Error | DiagnosticLevel::Ice)
}
