//! Starting the watched command and ending it. It runs in its own process group with its
//! standard streams passed through untouched; a time limit or Ctrl-C (SIGINT, SIGTERM to
//! mldebug) sends the group SIGINT (Python raises KeyboardInterrupt where it is, so the trace
//! ends with where that was), then SIGKILL after a grace period, and mldebug itself stays to
//! judge what the traces hold. Processes that outlive the command in its group (loader
//! workers, a helper it started) are killed when it ends.

use super::guard;
use crate::child_process::{self, Descendants};
use crate::{Error, Result};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How often the command is looked at while it runs.
const POLL: Duration = Duration::from_millis(50);
/// Time between SIGINT and SIGKILL: enough for Python to run its exit handlers and flush.
const GRACE: Duration = Duration::from_secs(5);

/// How the command ended.
#[derive(Debug, Clone, Copy)]
pub struct Ended {
    /// Its exit status (after a kill, the kill's).
    pub status: Option<ExitStatus>,
    /// Stopped at the time limit.
    pub timed_out: bool,
    /// Stopped by Ctrl-C or SIGTERM to mldebug: the signal mldebug received (SIGINT, SIGTERM).
    pub interrupted: Option<i32>,
    /// Wall time from start to end.
    pub elapsed: Duration,
}

/// Runs `program args` with `env` added, until it exits or `limit` passes. With
/// `stdout_to_stderr` (a `--json` run, whose stdout carries the document alone) the program's
/// stdout goes to mldebug's stderr. Should mldebug be killed meanwhile, the command and `dir`
/// (the run's private folder) go with it ([`guard`]). `on_poll` is called each time the
/// command is looked at while it runs.
pub fn run(
    program: &std::path::Path,
    args: &[String],
    env: &[(String, String)],
    limit: Option<Duration>,
    stdout_to_stderr: bool,
    dir: &std::path::Path,
    on_poll: &mut dyn FnMut(),
) -> Result<Ended> {
    let mut cmd = Command::new(program);
    let stdout = if stdout_to_stderr {
        use std::os::fd::AsFd;
        std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .map(Stdio::from)
            .map_err(|e| Error::io("duplicating stderr", &e))?
    } else {
        Stdio::inherit()
    };
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::inherit())
        .stdout(stdout)
        .stderr(Stdio::inherit());
    crate::candle_threads::hide_from(&mut cmd);
    child_process::own_group(&mut cmd);
    guard::die_with_parent(&mut cmd);
    signals::install();
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::usage(format!("cannot start `{}`: {e}", program.display())))?;
    let pid = child.id();
    let guard = guard::Guard::start(pid, dir);
    let mut started_by = Descendants::new();
    let mut stopping: Option<Instant> = None;
    let (mut timed_out, mut interrupted) = (false, None);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) => {}
            Err(e) => return Err(Error::io("waiting for the command", &e)),
        }
        if stopping.is_none() {
            if limit.is_some_and(|l| started.elapsed() >= l) {
                timed_out = true;
            } else if let Some(sig) = signals::interrupted() {
                interrupted = Some(sig);
            }
            if timed_out || interrupted.is_some() {
                started_by.scan(pid);
                interrupt_group(pid);
                stopping = Some(Instant::now());
            }
        } else if stopping.is_some_and(|t| t.elapsed() >= GRACE) {
            child_process::kill_group(pid);
            let _ = child.kill();
            break child.wait().ok();
        }
        started_by.scan_now_and_then(pid);
        if stopping.is_none() {
            on_poll();
        }
        std::thread::sleep(POLL);
    };
    // Whatever the command left behind (loader workers, helpers in its group or in a session
    // of their own) ends with it.
    child_process::kill_group(pid);
    started_by.kill_alive();
    // A daemon that forked twice left the tree and the group, but not the environment.
    child_process::kill_by_environment(super::probes::RUN_DIR_VARIABLE, &dir.display().to_string());
    if let Some(g) = guard {
        g.release();
    }
    // The handlers stay for the rest of mldebug's life: a Ctrl-C or SIGTERM while the report is
    // made is noted, not fatal, so the trace is still kept and the private folder removed.
    Ok(Ended {
        status,
        timed_out,
        interrupted: interrupted.or_else(signals::interrupted),
        elapsed: started.elapsed(),
    })
}

/// SIGINT to the command's process group: Python raises KeyboardInterrupt where it is.
#[cfg(unix)]
fn interrupt_group(pid: u32) {
    child_process::signal_group(pid, libc::SIGINT);
}

#[cfg(not(unix))]
fn interrupt_group(_pid: u32) {}

/// SIGINT, SIGTERM and SIGHUP (a closed terminal) to mldebug while the command runs: noted, not
/// fatal, so the trace so far is judged. The handlers are mldebug's only: a child gets the
/// default ones back at exec.
#[cfg(unix)]
mod signals {
    use std::sync::atomic::{AtomicI32, Ordering};

    /// The first of SIGINT, SIGTERM and SIGHUP received, 0 for none.
    static INTERRUPTED: AtomicI32 = AtomicI32::new(0);

    extern "C" fn note(sig: libc::c_int) {
        let _ = INTERRUPTED.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    }

    pub fn install() {
        INTERRUPTED.store(0, Ordering::SeqCst);
        let handler = note as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            libc::signal(libc::SIGINT, handler);
            libc::signal(libc::SIGTERM, handler);
            libc::signal(libc::SIGHUP, handler);
        }
    }

    pub fn interrupted() -> Option<i32> {
        Some(INTERRUPTED.load(Ordering::SeqCst)).filter(|&s| s != 0)
    }
}

#[cfg(not(unix))]
mod signals {
    pub fn install() {}
    pub fn interrupted() -> Option<i32> {
        None
    }
}
