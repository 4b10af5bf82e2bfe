//! Exit codes, the same for every command (see README "Exit codes").

/// The process exit status of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Nothing wrong.
    Ok = 0,
    /// A check failed, or a comparison went against the gate.
    Failed = 1,
    /// Usage error or bad input (the message names the file and the place).
    Usage = 2,
    /// The user's crate did not build.
    BuildFailed = 3,
    /// The model errored at run time.
    ModelError = 4,
    /// `mldebug run`: the run reached `--timeout` (as `timeout(1)` exits).
    TimedOut = 124,
    /// `mldebug run`: its terminal closed (SIGHUP), the shells' 128 + 1.
    HangUp = 129,
    /// `mldebug run`: interrupted by Ctrl-C (SIGINT), the shells' 128 + 2.
    Interrupted = 130,
    /// `mldebug run`: terminated by SIGTERM, the shells' 128 + 15.
    Terminated = 143,
    /// A bug in mldebug itself.
    Internal = 70,
    /// Reading or writing failed at the operating-system level: stdout or an output file could
    /// not be written (a full disk, `> /dev/full`), or a lock or file in the build directory
    /// could not be made. Not a bug and not bad input (sysexits' EX_IOERR).
    Io = 74,
}

impl Exit {
    pub fn code(self) -> i32 {
        self as i32
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e.code() as u8)
    }
}
