//! Supervising a child process: its own process group, a time limit that kills the whole group,
//! and a readable account of how it ended. Used by the harness of a user's crate and by the
//! PyTorch driver.

use std::collections::VecDeque;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

#[cfg(unix)]
use std::os::unix::process::{CommandExt, ExitStatusExt};

/// How often the parent looks at the child while waiting.
const POLL: Duration = Duration::from_millis(50);

/// How a supervised child ended.
#[derive(Debug, Clone, Copy)]
pub enum Outcome {
    Exited(ExitStatus),
    /// Past its limit: it and everything it started were killed.
    TimedOut,
}

/// The last lines of a child's output, kept for an error message: memory stays bounded however
/// much the child writes.
#[derive(Debug)]
pub struct Tail {
    lines: VecDeque<String>,
    cap: usize,
}

impl Tail {
    /// Keeps at most `cap` lines.
    pub fn new(cap: usize) -> Tail {
        Tail {
            lines: VecDeque::with_capacity(cap + 1),
            cap,
        }
    }

    /// Adds a line, dropping the oldest past the cap.
    pub fn push(&mut self, line: String) {
        self.lines.push_back(line);
        if self.lines.len() > self.cap {
            self.lines.pop_front();
        }
    }

    /// The lines kept, oldest first.
    pub fn into_lines(self) -> Vec<String> {
        self.lines.into()
    }
}

/// Puts the child in its own process group, so a timeout kills everything it started (Unix
/// only; elsewhere the timeout kills the child process itself).
pub fn own_group(command: &mut Command) -> &mut Command {
    #[cfg(unix)]
    command.process_group(0);
    command
}

/// Waits for `child` until `limit` has passed since `started`, then kills its group.
pub fn wait(child: &mut Child, started: Instant, limit: Duration) -> std::io::Result<Outcome> {
    loop {
        match child.try_wait()? {
            Some(status) => return Ok(Outcome::Exited(status)),
            None if started.elapsed() >= limit => {
                kill_group(child.id());
                let _ = child.kill();
                let _ = child.wait();
                return Ok(Outcome::TimedOut);
            }
            None => std::thread::sleep(POLL),
        }
    }
}

/// "exit status 3", "it panicked: exit status 101", "killed by signal 9, often the
/// out-of-memory killer".
pub fn describe(status: ExitStatus) -> String {
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

#[cfg(test)]
mod tests {
    use super::Tail;

    #[test]
    fn a_tail_keeps_the_last_lines_only() {
        let mut t = Tail::new(2);
        for l in ["a", "b", "c"] {
            t.push(l.to_string());
        }
        assert_eq!(t.into_lines(), ["b", "c"]);
    }
}
