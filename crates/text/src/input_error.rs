//! The error type of the crates that read what the user gives (run files, the catalog): every
//! failure there is about the user's input, a request that cannot be honoured or a file that
//! cannot be read, never a bug. The binary maps both kinds to its exit code in one place.

use std::fmt;
use std::path::{Path, PathBuf};

/// What went wrong, with the words a person needs to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// Options or a request that cannot be honoured, or paths that hold nothing to read.
    Usage(String),
    /// A file that cannot be read: which file, where in it, and what is wrong.
    Input {
        /// The file, as the user named it.
        file: PathBuf,
        /// Where in it: a line, a record, a key path (empty when the whole file is meant).
        place: String,
        /// What is wrong there.
        message: String,
    },
}

/// A result whose error is an input [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Options, a request or paths that cannot be used.
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

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(m) => f.write_str(m),
            Error::Input {
                file,
                place,
                message,
            } => write!(f, "{}: {place}: {message}", file.display()),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_error_names_the_file_and_the_place() {
        let mut e = Error::input(Path::new("runs/a.json"), "line 3", "not a number");
        assert_eq!(e.to_string(), "runs/a.json: line 3: not a number");
        e.append(" (and more)");
        assert_eq!(e.message(), "runs/a.json: line 3: not a number (and more)");
        assert_eq!(Error::usage("no runs").to_string(), "no runs");
    }
}
