//! What every command needs to know about how it was asked to run, decided once in `main`
//! from the global flags and the environment: JSON or human output, colour and terminal width
//! for stdout and for stderr, and which catalog to answer from. Commands, the harness and the
//! renderers take a [`Context`], never the command-line structs.

use std::io::IsTerminal;
use std::path::PathBuf;

/// `--color`: when to use colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// How one stream is styled: colour on or off, and whether it is a terminal (tables fit its
/// width; a pipe gets a fixed width).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stream {
    pub colour: bool,
    pub terminal: bool,
}

impl Stream {
    /// The rule, in one place: `always` and `never` win; `auto` colours a terminal unless
    /// `NO_COLOR` is set to a non-empty value (<https://no-color.org>).
    pub fn decide(choice: ColorChoice, terminal: bool, no_color: bool) -> Stream {
        let colour = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => terminal && !no_color,
        };
        Stream { colour, terminal }
    }
}

/// The output format a command writes on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
}

/// The resolved global settings of one invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    pub format: Format,
    pub stdout: Stream,
    pub stderr: Stream,
    /// `--catalog DIR`: answer from these files instead of the embedded ones.
    pub catalog: Option<PathBuf>,
}

impl Context {
    /// Decide from the flags, the environment (`NO_COLOR`) and which streams are terminals.
    pub fn resolve(json: bool, color: ColorChoice, catalog: Option<PathBuf>) -> Context {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Context {
            format: if json { Format::Json } else { Format::Human },
            stdout: Stream::decide(color, std::io::stdout().is_terminal(), no_color),
            stderr: Stream::decide(color, std::io::stderr().is_terminal(), no_color),
            catalog,
        }
    }

    pub fn json(&self) -> bool {
        self.format == Format::Json
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_choices_win_and_auto_needs_a_terminal_without_no_color() {
        for (choice, terminal, no_color, colour) in [
            (ColorChoice::Always, false, true, true),
            (ColorChoice::Never, true, false, false),
            (ColorChoice::Auto, true, false, true),
            (ColorChoice::Auto, true, true, false),
            (ColorChoice::Auto, false, false, false),
        ] {
            assert_eq!(
                Stream::decide(choice, terminal, no_color).colour,
                colour,
                "{choice:?} terminal={terminal} NO_COLOR={no_color}"
            );
        }
    }
}
