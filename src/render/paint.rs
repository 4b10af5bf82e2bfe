//! Colour for text outside tables: the one ANSI writer ([`sgr`]) and the knowledge commands'
//! painter. Whether colour is on is decided once ([`crate::context::Stream::decide`]). Status
//! words are always written out, so nothing depends on colour alone.

use crate::catalog::QuoteStatus;
use crate::context::Stream;

/// `text` in the SGR style `code` (`"31"` red, `"1"` bold, ...) when `on`, else unchanged.
/// Control characters in `text` are escaped first ([`super::terminal::escape_text`]): what is
/// painted may hold data, and no data byte may produce a sequence.
pub fn sgr(on: bool, code: &str, text: &str) -> String {
    let text = super::terminal::escape_text(text);
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.into_owned()
    }
}

/// Whether to colour stdout, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paint {
    pub color: bool,
}

impl Paint {
    /// Colour as decided for the stream the text goes to.
    pub fn new(stream: Stream) -> Self {
        Paint {
            color: stream.colour,
        }
    }

    pub fn plain() -> Self {
        Paint { color: false }
    }

    fn sgr(&self, code: &str, s: &str) -> String {
        sgr(self.color, code, s)
    }

    pub fn bold(&self, s: &str) -> String {
        self.sgr("1", s)
    }

    pub fn dim(&self, s: &str) -> String {
        self.sgr("2", s)
    }

    pub fn cyan(&self, s: &str) -> String {
        self.sgr("36", s)
    }

    pub fn yellow(&self, s: &str) -> String {
        self.sgr("33", s)
    }

    pub fn green(&self, s: &str) -> String {
        self.sgr("32", s)
    }

    pub fn red(&self, s: &str) -> String {
        self.sgr("31", s)
    }

    /// A quote's status, coloured by how far it can be trusted.
    pub fn status(&self, s: QuoteStatus) -> String {
        match s {
            QuoteStatus::VerifiedExact => self.green(s.as_str()),
            QuoteStatus::VerifiedWithDifferences => self.cyan(s.as_str()),
            QuoteStatus::Unverified => self.yellow(status_word(s)),
        }
    }
}

/// A quote status in words; unverified in capitals so it stands out without colour.
pub fn status_word(s: QuoteStatus) -> &'static str {
    match s {
        QuoteStatus::Unverified => "UNVERIFIED",
        _ => s.as_str(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn painted_only_when_colour_is_on() {
        assert_eq!(Paint::plain().bold("x"), "x");
        assert_eq!(Paint { color: true }.bold("x"), "\x1b[1mx\x1b[0m");
        assert_eq!(
            Paint { color: true }.bold("x\x1b[8m"),
            "\x1b[1mx\\u{1b}[8m\x1b[0m"
        );
    }
}
