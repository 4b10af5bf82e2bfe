//! Writing a command's result to stdout. A closed pipe (`mldebug list | head`) is not an error:
//! the reader has what it wanted.

use crate::{Error, Result};
use std::io::{ErrorKind, Write};

/// Write human output to stdout, control characters escaped ([`super::terminal::safe`]);
/// `colour` keeps mldebug's own colour sequences ([`super::terminal::OURS`]) and no other. The
/// renderers escaped the data in `text` before colouring it.
pub fn emit(text: &str, colour: bool) -> Result<()> {
    write_stdout(&super::terminal::safe(text, colour))
}

/// Write a JSON document to stdout. serde_json escapes the C0 control characters; DEL and the C1
/// controls (U+0080–U+009F, where U+009B starts a terminal command) it leaves raw, so they are
/// written as `\u00XX` escapes here: the same JSON value, nothing a terminal acts on.
pub fn emit_json(text: &str) -> Result<()> {
    let raw = |c: char| ('\u{7f}'..='\u{9f}').contains(&c);
    if !text.contains(raw) {
        return write_stdout(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if raw(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    write_stdout(&out)
}

/// Write one line to stderr (a note, a warning, a file written), control characters escaped:
/// the one place commands print outside their result. A closed or full stderr is ignored, as
/// `eprintln!` would not.
pub fn note(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", super::terminal::safe(line, false));
}

fn write_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::io("writing to stdout", &e)),
    }
}
