//! The processes below a child, from /proc (nothing where there is none): each known by its
//! pid and its start time, so that a pid reused by a later, unrelated process is never taken
//! for one the child started, and never killed.

/// A process as /proc knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proc {
    pid: u32,
    /// Clock ticks after boot: tells it from a later process given the same pid.
    start: u64,
}

impl Proc {
    fn alive(self) -> bool {
        stat_of(self.pid).is_some_and(|(_, start)| start == self.start)
    }
}

/// Every process whose chain of parents leads to `root` (not `root` itself).
pub fn descendants(root: u32) -> Vec<Proc> {
    let mut all = Vec::new();
    for pid in pids() {
        if let Some((ppid, start)) = stat_of(pid) {
            all.push((Proc { pid, start }, ppid));
        }
    }
    let mut found: Vec<Proc> = Vec::new();
    let mut parents = vec![root];
    while let Some(parent) = parents.pop() {
        for &(p, ppid) in &all {
            if ppid == parent && !found.contains(&p) {
                found.push(p);
                parents.push(p.pid);
            }
        }
    }
    found
}

/// Every process (but this one) whose environment holds `var=value`: what a program started
/// under a run inherited, found even when it left the tree (a daemon that forked twice, whose
/// parent is now init) or its group.
pub fn with_environment(var: &str, value: &str) -> Vec<Proc> {
    let want = format!("{var}={value}");
    let own = std::process::id();
    let mut found = Vec::new();
    for pid in pids().filter(|&p| p != own) {
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if environ.split(|&b| b == 0).any(|e| e == want.as_bytes()) {
            if let Some((_, start)) = stat_of(pid) {
                found.push(Proc { pid, start });
            }
        }
    }
    found
}

/// `now` (the descendants just found), and those of `before` still alive as the same process:
/// a helper whose parent died is no longer a descendant, but is still the child's doing.
pub fn still_known(before: Vec<Proc>, mut now: Vec<Proc>) -> Vec<Proc> {
    for p in before {
        if !now.contains(&p) && p.alive() {
            now.push(p);
        }
    }
    now
}

/// Kills each of `procs` that is still the same process.
pub fn kill_alive(procs: &[Proc]) {
    let alive: Vec<i32> = procs
        .iter()
        .filter(|p| p.alive())
        .filter_map(|p| i32::try_from(p.pid).ok())
        .filter(|&p| p > 1)
        .collect();
    #[cfg(unix)]
    super::kill(&alive);
    #[cfg(not(unix))]
    let _ = alive;
}

/// Every process id /proc lists (none where there is no /proc).
fn pids() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()))
}

/// The parent pid and start time of process `pid`.
fn stat_of(pid: u32) -> Option<(u32, u64)> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The parent pid and start time in a /proc/PID/stat line: `pid (comm) state ppid ...`, where
/// comm may hold spaces and parentheses (so the fields are counted after its last `)`; the
/// start time is field 22, the 20th after comm).
fn parse_stat(stat: &str) -> Option<(u32, u64)> {
    let after = &stat[stat.rfind(')')? + 1..];
    let mut fields = after.split_whitespace();
    let ppid = fields.nth(1)?.parse().ok()?;
    let start = fields.nth(17)?.parse().ok()?;
    Some((ppid, start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    #[test]
    fn the_stat_line_is_read_past_a_command_name_with_spaces_and_parentheses() {
        let stat = "42 (a) b) (c) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 98765 100 0";
        assert_eq!(parse_stat(stat), Some((7, 98765)));
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (x) S 0"), None);
    }

    /// Gone, or a zombie until init reaps it.
    fn dead(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
            s.rfind(')')
                .is_some_and(|i| s[i + 1..].trim_start().starts_with('Z'))
        })
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_helper_in_its_own_session_is_killed_when_its_parent_exits_and_when_it_times_out() {
        // The shell starts a helper in a new session (out of reach of the group kill), then
        // exits soon, or stays until it is timed out.
        for (script, limit) in [
            (
                "setsid sleep 30 & echo $! ; sleep 1",
                Duration::from_secs(20),
            ),
            (
                "setsid sleep 30 & echo $! ; sleep 30",
                Duration::from_secs(2),
            ),
        ] {
            let mut command = Command::new("sh");
            command.args(["-c", script]).stdout(Stdio::piped());
            super::super::own_group(&mut command);
            let mut child = command.spawn().unwrap();
            let mut out = child.stdout.take().unwrap();
            let mut pid = String::new();
            let mut byte = [0u8; 1];
            while out.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
                pid.push(byte[0] as char);
            }
            let helper: u32 = pid.trim().parse().unwrap();
            // The helper itself (setsid execs sleep in place), alive: sleeping, or still
            // running on its way into the sleep on a busy machine.
            let stat = || std::fs::read_to_string(format!("/proc/{helper}/stat")).unwrap();
            let deadline = Instant::now() + Duration::from_secs(5);
            while !stat().contains("(sleep)") && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            assert!(stat().contains("(sleep)") && !dead(helper), "{}", stat());
            let t = Instant::now();
            super::super::wait(&mut child, t, limit).unwrap();
            assert!(t.elapsed() < Duration::from_secs(10), "{script}");
            let deadline = Instant::now() + Duration::from_secs(5);
            while !dead(helper) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            assert!(dead(helper), "{script}: helper {helper} still runs");
        }
    }
}
