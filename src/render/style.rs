//! The house style of tables and the colour of each status. Whether colour is on is decided
//! once, in [`crate::context`]; a [`Style`] carries that decision for one stream.

use crate::context::Stream;
use comfy_table::{Cell, Color, ContentArrangement, LineStyle, Table, TableStyle};
use mldebug_diagnostics::Status;

/// Table width when stdout is not a terminal (a pipe, a file, a test): wide enough for a summary
/// and its numbers side by side, narrow enough to read in a diff or an editor.
pub const PIPE_WIDTH: u16 = 100;
/// A terminal narrower than this is taken for one that reports no real size.
const MIN_TERMINAL_WIDTH: u16 = 40;

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

impl From<Stream> for Style {
    fn from(s: Stream) -> Style {
        Style {
            colour: s.colour,
            terminal: s.terminal,
        }
    }
}

impl Style {
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
        // A pipe, or a terminal that reports too few columns to lay a table out (a pty never
        // sized reports 0): the width of a pipe.
        if !self.terminal || table.width().is_none_or(|w| w < MIN_TERMINAL_WIDTH) {
            table.set_width(PIPE_WIDTH);
        }
        self.apply(&mut table);
        table
    }

    /// A table cell holding `text`, a data value: escaped ([`super::terminal::escape`]).
    pub fn cell(&self, text: impl ToString) -> Cell {
        Cell::new(super::terminal::escape(&text.to_string()))
    }

    /// A table cell with `text` (escaped), coloured like `status` when colour is on.
    pub fn status_cell(&self, status: Status, text: impl ToString) -> Cell {
        let cell = self.cell(text);
        match (self.colour, status_colour(status)) {
            (true, Some(c)) => cell.fg(c),
            _ => cell,
        }
    }

    /// `text` wrapped in the ANSI colour of `status` (for lines outside a table).
    pub fn paint(&self, status: Status, text: &str) -> String {
        let code = match status {
            Status::Pass => "32",
            Status::Warn => "33",
            Status::Fail | Status::Error => "31",
            Status::Skipped => return text.to_string(),
        };
        super::paint::sgr(self.colour, code, text)
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
