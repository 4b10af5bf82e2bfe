//! Colour for the knowledge commands' text (quotes, entries, triage). The decision itself is
//! [`super::style::Style::decide`], shared with every other command. Status words are always
//! written out, so nothing depends on colour alone.

use crate::catalog::QuoteStatus;
use crate::cli::ColorChoice;

/// Whether to colour stdout, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paint {
    pub color: bool,
}

impl Paint {
    /// Decide from the `--color` flag, `NO_COLOR` and whether stdout is a terminal.
    pub fn new(choice: ColorChoice) -> Self {
        Paint {
            color: super::style::Style::for_stdout(choice).colour,
        }
    }

    pub fn plain() -> Self {
        Paint { color: false }
    }

    fn sgr(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
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

/// The rule: an explicit `--color always|never` wins; `auto` colours a terminal unless
/// `NO_COLOR` is set (no-color.org).
pub fn use_color(choice: ColorChoice, no_color: bool, terminal: bool) -> bool {
    super::style::Style::decide(choice, terminal, no_color).colour
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
    fn colour_only_on_a_terminal_without_no_color_unless_forced() {
        assert!(use_color(ColorChoice::Auto, false, true));
        assert!(!use_color(ColorChoice::Auto, true, true));
        assert!(!use_color(ColorChoice::Auto, false, false));
        assert!(use_color(ColorChoice::Always, true, false));
        assert!(!use_color(ColorChoice::Never, false, true));
        assert_eq!(Paint::plain().bold("x"), "x");
        assert_eq!(Paint { color: true }.bold("x"), "\x1b[1mx\x1b[0m");
    }
}
