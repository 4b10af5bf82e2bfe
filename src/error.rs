//! The one error type of the CLI: a message for a person, and the exit code it maps to.

use crate::exit::Exit;
use std::fmt;
use std::path::Path;

#[derive(Debug)]
pub struct Error {
    pub exit: Exit,
    pub message: String,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(exit: Exit, message: impl Into<String>) -> Self {
        Error {
            exit,
            message: message.into(),
        }
    }

    /// Bad command-line usage (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Error::new(Exit::Usage, message)
    }

    /// Bad input in a file (exit 2). `place` is a line, a record, a byte offset: whatever
    /// lets the user find it, e.g. "line 12" or "record 3 (byte 4096)".
    pub fn input(file: &Path, place: impl fmt::Display, message: impl fmt::Display) -> Self {
        Error::new(
            Exit::Usage,
            format!("{}: {}: {}", file.display(), place, message),
        )
    }

    /// An operating-system I/O failure on output or working files (exit 74): `what` says which.
    pub fn io(what: impl fmt::Display, e: &std::io::Error) -> Self {
        Error::new(Exit::Io, format!("{what}: {e}"))
    }

    /// The user's model failed at run time (exit 4).
    pub fn model(message: impl Into<String>) -> Self {
        Error::new(Exit::ModelError, message)
    }

    /// A bug in mldebug (exit 70).
    pub fn internal(message: impl Into<String>) -> Self {
        Error::new(Exit::Internal, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// The exit code of every failure of the reading crates (`mldebug-sweep`, `mldebug-catalog`),
/// decided here: both kinds are the user's input (exit 2).
impl From<mldebug_text::input_error::Error> for Error {
    fn from(e: mldebug_text::input_error::Error) -> Self {
        use mldebug_text::input_error::Error as E;
        let exit = match e {
            E::Usage(_) | E::Input { .. } => Exit::Usage,
        };
        Error::new(exit, e.to_string())
    }
}
