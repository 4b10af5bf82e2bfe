//! The one error type of the CLI: what kind of failure it is, a message for a person, and the
//! error that caused it when there is one. The exit code is derived from the kind, here and only
//! here ([`Error::exit`]).

use crate::exit::Exit;
use std::fmt;
use std::path::Path;

/// What kind of failure an [`Error`] is; it alone decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bad command-line usage, or a request that cannot be honoured.
    Usage,
    /// A file the user gave cannot be read or is malformed.
    Input,
    /// Reading or writing failed at the operating-system level (a full disk, a lock).
    Io,
    /// The user's crate did not build.
    BuildFailed,
    /// The user's model failed at run time.
    Model,
    /// A bug in mldebug.
    Internal,
}

/// A failure: its kind, the words a person needs, and its cause.
#[derive(Debug)]
pub struct Error {
    /// What kind of failure (and so the exit code).
    pub kind: Kind,
    /// The message printed after `error: `.
    pub message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

/// A result whose error is an [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of `kind` saying `message`.
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// The same error, caused by `source` (kept for [`std::error::Error::source`]).
    pub fn caused_by(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// The exit code of this kind of failure: the one place it is decided.
    pub fn exit(&self) -> Exit {
        match self.kind {
            Kind::Usage | Kind::Input => Exit::Usage,
            Kind::Io => Exit::Io,
            Kind::BuildFailed => Exit::BuildFailed,
            Kind::Model => Exit::ModelError,
            Kind::Internal => Exit::Internal,
        }
    }

    /// Bad command-line usage (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Error::new(Kind::Usage, message)
    }

    /// Bad input in a file (exit 2). `place` is a line, a record, a byte offset: whatever
    /// lets the user find it, e.g. "line 12" or "record 3 (byte 4096)".
    pub fn input(file: &Path, place: impl fmt::Display, message: impl fmt::Display) -> Self {
        Error::new(
            Kind::Input,
            format!("{}: {}: {}", file.display(), place, message),
        )
    }

    /// An operating-system I/O failure on output or working files (exit 74): `what` says which.
    pub fn io(what: impl fmt::Display, e: &std::io::Error) -> Self {
        Error::new(Kind::Io, format!("{what}: {e}"))
            .caused_by(std::io::Error::new(e.kind(), e.to_string()))
    }

    /// The user's crate did not build (exit 3).
    pub fn build(message: impl Into<String>) -> Self {
        Error::new(Kind::BuildFailed, message)
    }

    /// The user's model failed at run time (exit 4).
    pub fn model(message: impl Into<String>) -> Self {
        Error::new(Kind::Model, message)
    }

    /// A bug in mldebug (exit 70).
    pub fn internal(message: impl Into<String>) -> Self {
        Error::new(Kind::Internal, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Every failure of the reading crates (`mldebug-sweep`, `mldebug-catalog`): both kinds are the
/// user's input.
impl From<mldebug_text::input_error::Error> for Error {
    fn from(e: mldebug_text::input_error::Error) -> Self {
        use mldebug_text::input_error::Error as E;
        let kind = match e {
            E::Usage(_) => Kind::Usage,
            E::Input { .. } => Kind::Input,
        };
        Error::new(kind, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn each_kind_has_its_documented_exit_code() {
        let cases = [
            (Error::usage("x"), Exit::Usage),
            (Error::input(Path::new("f"), "line 1", "bad"), Exit::Usage),
            (Error::build("x"), Exit::BuildFailed),
            (Error::model("x"), Exit::ModelError),
            (Error::internal("x"), Exit::Internal),
            (
                Error::io("out.json", &std::io::Error::other("disk full")),
                Exit::Io,
            ),
        ];
        for (e, exit) in cases {
            assert_eq!(e.exit(), exit, "{:?}", e.kind);
        }
        let read =
            mldebug_text::input_error::Error::input(Path::new("runs.csv"), "row 3", "no value");
        let e = Error::from(read);
        assert_eq!((e.kind, e.exit()), (Kind::Input, Exit::Usage));
        assert!(e.message.contains("runs.csv"), "{}", e.message);
    }

    #[test]
    fn an_io_error_keeps_its_cause() {
        let e = Error::io("writing plot.svg", &std::io::Error::other("disk full"));
        assert_eq!(e.message, "writing plot.svg: disk full");
        assert_eq!(e.source().unwrap().to_string(), "disk full");
        assert!(Error::usage("x").source().is_none());
    }
}
