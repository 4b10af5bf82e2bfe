//! Supervising a child process: its own process group, a time limit that kills the whole group
//! and every descendant still attached to it, pipes read in bounded lines by threads that are
//! never waited on past a deadline, and a readable account of how it ended. Used by the harness
//! of a user's crate and by the PyTorch driver.
//!
//! A process the child starts can outlive it and keep its pipes open (a helper in its own
//! session escapes the group kill): while the child runs its descendants are looked up every
//! [`SCAN_EVERY`] ([`tree`]) and those still alive when it ends are killed; the readers are
//! abandoned after [`DRAIN_GRACE`], with what they had read, instead of waiting for the pipe to
//! end. `mldebug run`'s launcher follows the same descendants ([`Descendants`]) with its own
//! stop sequence (SIGINT first, its output passed through).

mod tree;

use std::collections::VecDeque;
use std::io::Read;
use std::process::{Child, Command, ExitStatus};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

#[cfg(unix)]
use std::os::unix::process::{CommandExt, ExitStatusExt};

/// How often the parent looks at the child while waiting.
const POLL: Duration = Duration::from_millis(50);
/// How long a child's pipes may take to end after it exited or was killed: its last output is
/// read in well under this; a pipe still open after it is held by a process it left behind.
pub const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// The longest line a tail keeps: a traceback line fits; the rest of a longer line is dropped
/// as it is read (a progress bar redrawn with `\r` and no newline for gigabytes included).
pub const TAIL_LINE_BYTES: usize = 4096;
/// How much is read from a pipe at a time.
const CHUNK: usize = 64 * 1024;
/// How often the child's descendants are looked up while it runs: a helper that lives longer
/// than this is found; each look reads one /proc file per process (a few milliseconds).
const SCAN_EVERY: Duration = Duration::from_millis(250);

/// How a supervised child ended.
#[derive(Debug, Clone, Copy)]
pub enum Outcome {
    Exited(ExitStatus),
    /// Past its limit: it and everything it started that could be found were killed.
    TimedOut,
}

/// The last lines of a child's output, kept for an error message: memory stays bounded however
/// much the child writes (at most `cap` lines of at most [`TAIL_LINE_BYTES`] each).
#[derive(Debug, Default)]
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

    /// Adds a line (cut at [`TAIL_LINE_BYTES`]), dropping the oldest past the cap.
    pub fn push(&mut self, mut line: String) {
        if line.len() > TAIL_LINE_BYTES {
            let mut cut = TAIL_LINE_BYTES;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
        }
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

/// Calls `f(line, cut)` for each line of `stream` (without its end), never holding more than
/// `max` bytes of one: the rest of a longer line is dropped and `cut` is true. `\n` ends a line;
/// with `cr_ends` a `\r` does too (`\r\n` is one end). A read error ends the stream.
pub fn for_each_line(
    mut stream: impl Read,
    max: usize,
    cr_ends: bool,
    mut f: impl FnMut(&[u8], bool) -> bool,
) {
    let mut chunk = vec![0u8; CHUNK];
    let mut line: Vec<u8> = Vec::new();
    let mut cut = false;
    let mut after_cr = false;
    loop {
        let n = match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut rest = &chunk[..n];
        while !rest.is_empty() {
            let end = rest
                .iter()
                .position(|&b| b == b'\n' || (cr_ends && b == b'\r'));
            let (part, terminator) = match end {
                Some(i) => (&rest[..i], Some(rest[i])),
                None => (rest, None),
            };
            if !part.is_empty() {
                after_cr = false;
            }
            let room = max.saturating_sub(line.len());
            line.extend_from_slice(&part[..part.len().min(room)]);
            cut |= part.len() > room;
            rest = &rest[part.len()..];
            if let Some(t) = terminator {
                rest = &rest[1..];
                let crlf = t == b'\n' && after_cr && line.is_empty() && !cut;
                after_cr = t == b'\r';
                if !crlf && !f(&line, cut) {
                    return;
                }
                line.clear();
                cut = false;
            }
        }
    }
    if !line.is_empty() || cut {
        f(&line, cut);
    }
}

/// A thread reading one of a child's pipes into a state of its own, that the caller takes by a
/// deadline whether or not the pipe has ended.
pub struct PipeReader<T> {
    state: Arc<Mutex<Option<T>>>,
    done: mpsc::Receiver<()>,
}

impl<T: Send + 'static> PipeReader<T> {
    /// Reads `stream` line by line (as [`for_each_line`]) on a thread, handing each line to
    /// `on_line` with the state. Once the state is taken the thread stops at the next line.
    pub fn spawn(
        stream: impl Read + Send + 'static,
        max_line: usize,
        cr_ends: bool,
        state: T,
        mut on_line: impl FnMut(&mut T, &[u8], bool) + Send + 'static,
    ) -> PipeReader<T> {
        let state = Arc::new(Mutex::new(Some(state)));
        let (tx, done) = mpsc::channel();
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for_each_line(stream, max_line, cr_ends, |line, cut| {
                let mut guard = shared.lock().unwrap_or_else(|p| p.into_inner());
                match guard.as_mut() {
                    Some(s) => {
                        on_line(s, line, cut);
                        true
                    }
                    None => false,
                }
            });
            let _ = tx.send(());
        });
        PipeReader { state, done }
    }

    /// The state once the pipe has ended, or at `deadline` what was read by then (the thread,
    /// blocked on a pipe some left-behind process holds, is abandoned). The flag says whether
    /// the pipe ended.
    pub fn finish(self, deadline: Instant) -> (Option<T>, bool) {
        let wait = deadline.saturating_duration_since(Instant::now());
        let ended = self.done.recv_timeout(wait).is_ok();
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        (guard.take(), ended)
    }
}

/// Puts the child in its own process group, so a timeout kills everything it started (Unix
/// only; elsewhere the timeout kills the child process itself).
pub fn own_group(command: &mut Command) -> &mut Command {
    #[cfg(unix)]
    command.process_group(0);
    command
}

/// Waits for `child` until `limit` has passed since `started`. Past it, kills the child's
/// group, the child and every descendant it started (a helper that left the group with
/// `setsid` included). Once the child has exited, what it left behind (in its group, or seen
/// among its descendants and still alive) is killed too, so that nothing it started holds its
/// pipes open.
pub fn wait(child: &mut Child, started: Instant, limit: Duration) -> std::io::Result<Outcome> {
    let mut started_by = Descendants::new();
    loop {
        match child.try_wait()? {
            Some(status) => {
                kill_group(child.id());
                started_by.kill_alive();
                return Ok(Outcome::Exited(status));
            }
            None if started.elapsed() >= limit => {
                started_by.scan(child.id());
                kill_group(child.id());
                let _ = child.kill();
                let _ = child.wait();
                started_by.kill_alive();
                return Ok(Outcome::TimedOut);
            }
            None => {
                started_by.scan_now_and_then(child.id());
                std::thread::sleep(POLL);
            }
        }
    }
}

/// The processes a child started, followed while it runs: looked up every [`SCAN_EVERY`] so
/// that a helper which left the child's group (`setsid`) or lost its parent is still known, and
/// killed (each only while it is the same process) when the child is done.
#[derive(Debug)]
pub struct Descendants {
    seen: Vec<tree::Proc>,
    scanned: Instant,
}

impl Descendants {
    /// Nothing seen yet; the first look comes [`SCAN_EVERY`] from now.
    pub fn new() -> Descendants {
        Descendants {
            seen: Vec::new(),
            scanned: Instant::now(),
        }
    }

    /// Looks below `root` now.
    pub fn scan(&mut self, root: u32) {
        self.seen = tree::still_known(std::mem::take(&mut self.seen), tree::descendants(root));
        self.scanned = Instant::now();
    }

    /// Looks below `root` when [`SCAN_EVERY`] has passed since the last look.
    pub fn scan_now_and_then(&mut self, root: u32) {
        if self.scanned.elapsed() >= SCAN_EVERY {
            self.scan(root);
        }
    }

    /// Kills each process seen that is still alive as the same process.
    pub fn kill_alive(&self) {
        tree::kill_alive(&self.seen);
    }
}

/// Kills every process whose environment holds `var=value` (a run's private folder, which
/// every process the run started inherits): those that left both the tree and the group.
pub fn kill_by_environment(var: &str, value: &str) {
    tree::kill_alive(&tree::with_environment(var, value));
}

impl Default for Descendants {
    fn default() -> Self {
        Descendants::new()
    }
}

/// "exit status 3", "it panicked: exit status 101", "killed by SIGKILL (signal 9), often the
/// out-of-memory killer", "killed by SIGSEGV (signal 11): a crash in native code".
pub fn describe(status: ExitStatus) -> String {
    match (status.code(), signal_of(status)) {
        (Some(101), _) => "it panicked: exit status 101".to_string(),
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(s)) => {
            let why = match s {
                9 => ", often the out-of-memory killer",
                11 | 7 | 4 => ": a crash in native code",
                6 => ": an abort (a failed assertion in native code, or a double free)",
                2 => ": an interrupt (Ctrl-C)",
                _ => "",
            };
            format!("killed by {}{why}", signal_words(s))
        }
        _ => status.to_string(),
    }
}

/// The signal that ended a process, if one did.
pub fn signal_of(status: ExitStatus) -> Option<i32> {
    #[cfg(unix)]
    return status.signal();
    #[cfg(not(unix))]
    {
        let _ = status;
        None
    }
}

/// "SIGSEGV (signal 11)", or "signal 40" for one without a common name.
pub fn signal_words(sig: i32) -> String {
    match signal_name(sig) {
        Some(n) => format!("{n} (signal {sig})"),
        None => format!("signal {sig}"),
    }
}

/// The name of a Linux signal number, for the ones a training program meets.
pub fn signal_name(sig: i32) -> Option<&'static str> {
    Some(match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 => "SIGUSR1",
        11 => "SIGSEGV",
        12 => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        26 => "SIGVTALRM",
        27 => "SIGPROF",
        31 => "SIGSYS",
        _ => return None,
    })
}

/// Without process groups, the child alone is killed (by the caller).
#[cfg(not(unix))]
pub fn kill_group(_pid: u32) {}

/// Kill the child's whole process group (the child leads it: its pgid is its pid).
#[cfg(unix)]
pub fn kill_group(pid: u32) {
    signal_group(pid, libc::SIGKILL);
}

/// `signal` to the process group led by `pid` (never to group 0 or 1, which are not a child's).
#[cfg(unix)]
pub fn signal_group(pid: u32, signal: i32) {
    if let Ok(pgid) = i32::try_from(pid) {
        if pgid > 1 {
            send(&[-pgid], signal);
        }
    }
}

/// SIGKILL to each of `targets` (pids, or `-pgid` for a group).
#[cfg(unix)]
fn kill(targets: &[i32]) {
    send(targets, libc::SIGKILL);
}

/// `signal` to each of `targets` by the kill(2) system call: never a `kill` program found on
/// `PATH`, which may be missing or the user's own.
#[cfg(unix)]
fn send(targets: &[i32], signal: i32) {
    for &t in targets {
        // SAFETY: kill(2) has no memory effects; an error (the process is gone) is ignored.
        unsafe {
            libc::kill(t, signal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_keeps_the_last_lines_only_each_cut() {
        let mut t = Tail::new(2);
        for l in ["a", "b", "c"] {
            t.push(l.to_string());
        }
        t.push("é".repeat(TAIL_LINE_BYTES));
        let lines = t.into_lines();
        assert_eq!(lines[0], "c");
        assert!(lines[1].len() <= TAIL_LINE_BYTES && lines[1].len() > TAIL_LINE_BYTES - 2);
    }

    fn lines(input: &[u8], max: usize, cr: bool) -> Vec<(String, bool)> {
        let mut got = Vec::new();
        for_each_line(input, max, cr, |l, cut| {
            got.push((String::from_utf8_lossy(l).into_owned(), cut));
            true
        });
        got
    }

    #[test]
    fn lines_are_bounded_and_carriage_returns_end_them_when_asked() {
        let ok = |s: &str| (s.to_string(), false);
        assert_eq!(
            lines(b"a\nbb\n\nc", 8, false),
            [ok("a"), ok("bb"), ok(""), ok("c")]
        );
        assert_eq!(
            lines(b"10%\r20%\r\ndone\n", 8, true),
            [ok("10%"), ok("20%"), ok("done")]
        );
        assert_eq!(lines(b"10%\r20%\n", 8, false), [ok("10%\r20%")]);
        assert_eq!(
            lines(b"abcdefghij\nxy", 4, false),
            [("abcd".to_string(), true), ok("xy")]
        );
        // A line with no end at all, far longer than the cap, is held at the cap.
        let long = vec![b'x'; 3 * CHUNK + 5];
        let got = lines(&long, 16, true);
        assert_eq!(got, [("x".repeat(16), true)]);
    }

    #[test]
    fn a_reader_is_given_up_on_at_its_deadline_with_what_it_read() {
        // A pipe that never ends: the reading end of a pipe whose writer is kept open here.
        let (reader, mut writer) = std::io::pipe().unwrap();
        use std::io::Write;
        writer.write_all(b"one\ntwo\n").unwrap();
        let r = PipeReader::spawn(
            reader,
            64,
            false,
            Vec::new(),
            |v: &mut Vec<String>, l, _| v.push(String::from_utf8_lossy(l).into_owned()),
        );
        std::thread::sleep(Duration::from_millis(100));
        let t = Instant::now();
        let (got, ended) = r.finish(Instant::now() + Duration::from_millis(200));
        assert!(t.elapsed() < Duration::from_secs(2));
        assert!(!ended);
        assert_eq!(got.unwrap(), ["one", "two"]);
        drop(writer);
    }
}
