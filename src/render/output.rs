//! Writing a command's result to stdout. A closed pipe (`mldebug list | head`) is not an error:
//! the reader has what it wanted.

use crate::{Error, Result};
use std::io::{ErrorKind, Write};

/// Write `text` to stdout, as is.
pub fn emit(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::io("writing to stdout", &e)),
    }
}
