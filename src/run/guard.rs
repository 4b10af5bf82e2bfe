//! What ends the watched command when mldebug itself is killed (SIGKILL, an out-of-memory kill, a
//! CI runner that kills the job): the command runs in a process group of its own, so nothing
//! would reach it, and its private folder would stay behind.
//!
//! Two layers:
//! - the command's first process gets a parent-death signal (SIGKILL, set in the child before
//!   it starts the program): it dies with mldebug;
//! - a guard, mldebug itself started again as `mldebug __run-guard PGID DIR`, in a process
//!   group of its own, reads a pipe whose writing end mldebug alone holds. When the pipe ends
//!   without the word `done` (mldebug died), the guard kills the command's group and every
//!   process found below the command, and removes the private folder. When mldebug ends the run
//!   itself it writes `done` first, and the guard exits doing nothing.

use super::probes::RUN_DIR_VARIABLE;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The first argument that starts the guard instead of the command line.
pub const ARG: &str = "__run-guard";
/// The guard's process name (`pkill -x mldebug` and `killall mldebug` leave it to its work).
#[cfg(target_os = "linux")]
const NAME: &[u8] = b"mldebug-guard\0";
/// What mldebug writes to the guard when it has ended the run itself.
const DONE: &[u8] = b"done";

/// The guard of one run, started once the command has started.
pub struct Guard {
    child: Child,
    pipe: Option<std::io::PipeWriter>,
}

impl Guard {
    /// Starts the guard for the command whose process group is `pgid`, and the folder `dir`.
    /// `None` when it cannot be started (the parent-death signal still ends the command's first
    /// process).
    pub fn start(pgid: u32, dir: &Path) -> Option<Guard> {
        let exe = std::env::current_exe().ok()?;
        let (reader, writer) = std::io::pipe().ok()?;
        let mut cmd = Command::new(exe);
        cmd.arg(ARG)
            .arg(pgid.to_string())
            .arg(dir)
            .stdin(Stdio::from(reader))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // Its own group: a kill of mldebug's group (a terminal's Ctrl-C, a job runner) leaves it
        // to do its work.
        crate::child_process::own_group(&mut cmd);
        crate::candle_threads::hide_from(&mut cmd);
        let child = cmd.spawn().ok()?;
        Some(Guard {
            child,
            pipe: Some(writer),
        })
    }

    /// mldebug ended the run itself: the guard exits without touching anything.
    pub fn release(mut self) {
        if let Some(mut w) = self.pipe.take() {
            let _ = w.write_all(DONE);
        }
        let _ = self.child.wait();
    }
}

/// `mldebug __run-guard PGID DIR`: waits for the pipe on its stdin to end; unless it said
/// `done`, kills the group PGID and what it started, and removes DIR (a folder `mldebug run`
/// made: its name starts with `mldebug-run-`). Returns the exit status.
pub fn main(args: &[String]) -> u8 {
    let (Some(pgid), Some(dir)) = (
        args.first().and_then(|p| p.parse::<u32>().ok()),
        args.get(1).map(PathBuf::from),
    ) else {
        return 2;
    };
    if pgid <= 1 {
        return 2;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, NAME.as_ptr() as libc::c_ulong, 0, 0, 0);
    }
    let mut said = Vec::new();
    let _ = std::io::stdin().lock().take(64).read_to_end(&mut said);
    if said == DONE {
        return 0;
    }
    // mldebug is gone: end everything the command started, then its folder.
    let mut below = crate::child_process::Descendants::new();
    below.scan(pgid);
    crate::child_process::kill_group(pgid);
    below.kill_alive();
    crate::child_process::kill_by_environment(RUN_DIR_VARIABLE, &dir.display().to_string());
    let ours = dir
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("mldebug-run-"));
    if ours {
        // The processes may still be writing their last lines for a moment after the kill.
        for _ in 0..20 {
            if std::fs::remove_dir_all(&dir).is_ok() || !dir.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
    0
}

/// Sets the parent-death signal (SIGKILL) in the child before it runs the program, and ends the
/// child at once when mldebug died before that was set.
#[cfg(target_os = "linux")]
pub fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: prctl and getppid are async-signal-safe; nothing is allocated in the closure.
    let parent = unsafe { libc::getpid() };
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                libc::_exit(137);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
pub fn die_with_parent(_cmd: &mut Command) {}
