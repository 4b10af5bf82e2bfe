//! CSV files, told apart by their header: Lightning's `metrics.csv`, and the W&B UI's runs-table
//! and line-panel exports.

use super::csv;
use super::{lightning_csv, wandb_csv, Found};
use crate::{Error, Result};
use std::path::Path;

/// What the reader looks for in a CSV header, for "not a run file" messages.
const CSV_SHAPES: &str = "Lightning's metrics.csv (a \"step\" or \"epoch\" column), a W&B \
     runs-table export (\"Name\" and \"State\" columns) or a W&B line-panel export (\"Step\", \
     then \"<run> - <metric>\" columns)";

pub fn read(path: &Path, bytes: &[u8], root: Option<&Path>) -> Result<Found> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| Error::input(path, "content", format_args!("not UTF-8 text: {e}")))?;
    let records = csv::parse(path, text)?;
    let Some(header) = records.first() else {
        return Ok(Found::NotARun("an empty CSV file".into()));
    };
    let h = &header.cells;
    if wandb_csv::is_line_panel(h) {
        wandb_csv::read_line_panel(path, &records)
    } else if wandb_csv::is_runs_table(h) {
        wandb_csv::read_runs_table(path, &records)
    } else if lightning_csv::is_lightning(h) {
        lightning_csv::read(path, &records, root)
    } else if let Some(col) = ["summary", "config"]
        .iter()
        .find(|c| h.iter().any(|x| x == *c))
    {
        let line = records.get(1).map_or(header.line, |r| r.line);
        Err(wandb_csv::python_repr_error(path, line, col))
    } else {
        Ok(Found::NotARun(format!("a CSV file, but not {CSV_SHAPES}")))
    }
}
