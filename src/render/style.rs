//! Whether to colour the output, and the colour of each status.
//!
//! Colour is on only when asked for (`--color always`), or by default when stdout is a terminal
//! and `NO_COLOR` is not set (<https://no-color.org>: any non-empty value turns colour off).

use crate::cli::ColorChoice;
use comfy_table::{Cell, Color, ContentArrangement, LineStyle, Table, TableStyle};
use mldebug_diagnostics::Status;
use std::io::IsTerminal;

/// Table width when stdout is not a terminal (a pipe, a file, a test): wide enough for a summary
/// and its numbers side by side, narrow enough to read in a diff or an editor.
pub const PIPE_WIDTH: u16 = 100;

/// No borders, one rule under the header: quiet enough for many rows, clear enough to scan.
const HEADER_RULE: TableStyle =
    TableStyle::new().header_separator(LineStyle::none().fill('─').junction('─'));

/// The styling decision for one run, made once from the flags and the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub colour: bool,
    /// stdout is a terminal: tables fit its width (else [`PIPE_WIDTH`]).
    pub terminal: bool,
}

impl Style {
    /// Decide from `--color`, whether stdout is a terminal, and `NO_COLOR`.
    pub fn for_stdout(choice: ColorChoice) -> Style {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style::decide(choice, std::io::stdout().is_terminal(), no_color)
    }

    pub fn decide(choice: ColorChoice, terminal: bool, no_color: bool) -> Style {
        let colour = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => terminal && !no_color,
        };
        Style { colour, terminal }
    }

    /// No colour, not a terminal: what tests and pipes get.
    pub fn plain() -> Style {
        Style {
            colour: false,
            terminal: false,
        }
    }

    /// An empty table in the house style, sized for where it is printed.
    pub fn table(&self) -> Table {
        let mut table = Table::new();
        table
            .load_style(HEADER_RULE)
            .set_content_arrangement(ContentArrangement::Dynamic);
        if !self.terminal {
            table.set_width(PIPE_WIDTH);
        }
        self.apply(&mut table);
        table
    }

    /// A table cell with `text`, coloured like `status` when colour is on.
    pub fn status_cell(&self, status: Status, text: impl ToString) -> Cell {
        let cell = Cell::new(text);
        match (self.colour, status_colour(status)) {
            (true, Some(c)) => cell.fg(c),
            _ => cell,
        }
    }

    /// `text` wrapped in the ANSI colour of `status` (for lines outside a table).
    pub fn paint(&self, status: Status, text: &str) -> String {
        if !self.colour {
            return text.to_string();
        }
        let code = match status {
            Status::Pass => "32",
            Status::Warn => "33",
            Status::Fail | Status::Error => "31",
            Status::Skipped => return text.to_string(),
        };
        format!("\x1b[{code}m{text}\x1b[0m")
    }

    /// Apply the decision to a table. Cells carry colour only when it is on; comfy-table would
    /// drop it off a terminal, so it is told to keep it (`--color always` into a pipe).
    pub fn apply(&self, table: &mut comfy_table::Table) {
        if self.colour {
            table.enforce_styling();
        }
    }
}

fn status_colour(status: Status) -> Option<Color> {
    match status {
        Status::Pass => Some(Color::Green),
        Status::Warn => Some(Color::Yellow),
        Status::Fail | Status::Error => Some(Color::Red),
        Status::Skipped => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_colours_only_a_terminal_without_no_color() {
        assert!(Style::decide(ColorChoice::Auto, true, false).colour);
        assert!(!Style::decide(ColorChoice::Auto, false, false).colour);
        assert!(!Style::decide(ColorChoice::Auto, true, true).colour);
    }

    #[test]
    fn explicit_choices_win() {
        assert!(Style::decide(ColorChoice::Always, false, true).colour);
        assert!(!Style::decide(ColorChoice::Never, true, false).colour);
    }

    #[test]
    fn paint_is_plain_without_colour() {
        assert_eq!(Style::plain().paint(Status::Fail, "fail"), "fail");
        let colour = Style {
            colour: true,
            terminal: false,
        };
        let red = colour.paint(Status::Fail, "fail");
        assert!(red.starts_with("\x1b[31m") && red.ends_with("\x1b[0m"));
    }
}
