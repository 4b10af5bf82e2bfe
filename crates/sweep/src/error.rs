//! The one error type of the sweep crate. Every failure here is about what the user gave:
//! a flag that cannot be honoured or a file that cannot be read as a run. The binary maps each
//! kind to its exit code in one place.

use std::fmt;
use std::path::{Path, PathBuf};

/// What went wrong, with the words a person needs to fix it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Options that cannot be honoured together, or paths that hold no runs.
    #[error("{0}")]
    Usage(String),
    /// A file that is not a readable run: which file, where in it, and what is wrong.
    #[error("{}: {place}: {message}", file.display())]
    Input {
        file: PathBuf,
        place: String,
        message: String,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Options or paths that cannot be used.
    pub fn usage(message: impl Into<String>) -> Self {
        Error::Usage(message.into())
    }

    /// Bad input in a file. `place` is a line, a record, a byte offset: whatever lets the user
    /// find it, e.g. "line 12" or "record 3 (byte 4096)".
    pub fn input(file: &Path, place: impl fmt::Display, message: impl fmt::Display) -> Self {
        Error::Input {
            file: file.to_path_buf(),
            place: place.to_string(),
            message: message.to_string(),
        }
    }

    /// The message, as shown to a person.
    pub fn message(&self) -> String {
        self.to_string()
    }

    /// Adds a sentence to the end of the message.
    pub fn append(&mut self, text: &str) {
        match self {
            Error::Usage(m) | Error::Input { message: m, .. } => m.push_str(text),
        }
    }
}
