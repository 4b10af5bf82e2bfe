//! CSV files exported from the W&B web UI:
//! - the runs table ("Export CSV"): one row per run; `Name`, `State` and other run columns, then
//!   the config and summary keys flattened, which the export does not tell apart;
//! - a line panel ("Export as CSV"): a `Step` column, then `<run name> - <metric>` columns (and
//!   `…__MIN` / `…__MAX` ones for the shaded band, which are not data).

use super::cells::nonfinite;
use super::csv::Record;
use super::identity::{seed_from_config, seed_from_name, task_from_config};
use super::series::Series;
use super::Found;
use crate::record::RunRecord;
use crate::{Error, Result};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Runs-table columns that describe the run rather than configure or measure it.
const RUN_COLUMNS: [&str; 6] = ["Name", "Notes", "User", "Tags", "Created", "ID"];

/// The separator W&B puts between a run's name and the metric in a line-panel column.
const PANEL_SEPARATOR: &str = " - ";

/// Suffixes of line-panel columns that hold the band around a smoothed line, not data.
const PANEL_BAND_SUFFIXES: [&str; 2] = ["__MIN", "__MAX"];

/// Whether the header is a runs-table export.
pub fn is_runs_table(header: &[String]) -> bool {
    header.iter().any(|h| h == "Name") && header.iter().any(|h| h == "State")
}

/// Whether the header is a line-panel export.
pub fn is_line_panel(header: &[String]) -> bool {
    header.first().is_some_and(|h| h == "Step")
        && header.len() > 1
        && header[1..].iter().all(|h| h.contains(PANEL_SEPARATOR))
}

/// A cell that holds a Python dict's repr (W&B docs' pandas recipe writes these), not JSON.
fn is_python_repr(cell: &str) -> bool {
    let c = cell.trim_start();
    c.starts_with("{'") || c == "{}"
}

/// The error for a CSV whose cells are Python reprs.
pub fn python_repr_error(path: &Path, line: usize, column: &str) -> Error {
    Error::input(
        path,
        format_args!("line {line}, column {column:?}"),
        "this cell is a Python dict repr (pandas `to_csv` of `run.summary` / `run.config`), not \
         data a program can read back; write each run with json.dumps instead: {\"id\": run.id, \
         \"name\": run.name, \"config\": dict(run.config), \"summary\": run.summary._json_dict, \
         \"history\": list(run.scan_history())}",
    )
}

/// One run per row of a runs-table export.
pub fn read_runs_table(path: &Path, records: &[Record]) -> Result<Found> {
    let Some((header, rows)) = records.split_first() else {
        return Ok(Found::NotARun("an empty CSV file".into()));
    };
    let header = &header.cells;
    let mut runs = Vec::with_capacity(rows.len());
    for row in rows {
        let mut name = None;
        let mut group = None;
        let mut config = BTreeMap::new();
        let mut metrics = BTreeMap::new();
        for (col, cell) in row.cells.iter().enumerate() {
            let Some(key) = header.get(col) else {
                return Err(Error::input(
                    path,
                    format_args!("line {}", row.line),
                    format_args!("more cells than the header's {} columns", header.len()),
                ));
            };
            let cell = cell.trim();
            if cell.is_empty() {
                continue;
            }
            if is_python_repr(cell) {
                return Err(python_repr_error(path, row.line, key));
            }
            match key.as_str() {
                "Name" => name = Some(cell.to_string()),
                "Group" => group = Some(cell.to_string()),
                k if RUN_COLUMNS.contains(&k) => {}
                k => {
                    let number = cell.parse::<f64>().ok().or_else(|| nonfinite(cell));
                    if let Some(x) = number {
                        // A seed is the run's identity, never a result.
                        if !k.starts_with('_') && !super::identity::SEED_KEYS.contains(&k) {
                            metrics.insert(k.to_string(), x);
                        }
                    }
                    let value = match (number, cell) {
                        (Some(x), _) => serde_json::Number::from_f64(x)
                            .map_or_else(|| Value::String(cell.into()), Value::Number),
                        (None, "true") => Value::Bool(true),
                        (None, "false") => Value::Bool(false),
                        (None, _) => Value::String(cell.into()),
                    };
                    config.insert(k.to_string(), value);
                }
            }
        }
        let name = name.unwrap_or_else(|| format!("line {}", row.line));
        runs.push(RunRecord {
            seed: seed_from_config(&config).or_else(|| seed_from_name(&name)),
            task: task_from_config(&config),
            group,
            config,
            metrics,
            history: BTreeMap::new(),
            source: path.to_path_buf(),
            place: format!("line {}", row.line),
            name,
        });
    }
    if runs.is_empty() {
        return Ok(Found::NotARun(
            "a W&B runs-table export with no rows".into(),
        ));
    }
    Ok(Found::Runs(runs))
}

/// One run per `<run name> - …` prefix of a line-panel export, with its history.
pub fn read_line_panel(path: &Path, records: &[Record]) -> Result<Found> {
    let Some((header, rows)) = records.split_first() else {
        return Ok(Found::NotARun("an empty CSV file".into()));
    };
    // Column → (run index, metric); band columns are None.
    let mut order: Vec<String> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let columns: Vec<Option<(usize, String)>> = header.cells[1..]
        .iter()
        .map(|h| {
            if PANEL_BAND_SUFFIXES.iter().any(|s| h.ends_with(s)) {
                return None;
            }
            let (run, metric) = h.split_once(PANEL_SEPARATOR)?;
            let i = *index.entry(run.to_string()).or_insert_with(|| {
                order.push(run.to_string());
                order.len() - 1
            });
            Some((i, metric.to_string()))
        })
        .collect();
    let mut series: Vec<Series> = order.iter().map(|_| Series::default()).collect();
    for row in rows {
        let place = format!("line {}", row.line);
        let step_cell = row.cells.first().map(|s| s.trim()).unwrap_or_default();
        let step: f64 = step_cell.parse().map_err(|_| {
            Error::input(
                path,
                &place,
                format_args!("Step is not a number: {step_cell:?}"),
            )
        })?;
        for (cell, column) in row.cells.iter().skip(1).zip(&columns) {
            let (Some((run, metric)), cell) = (column, cell.trim()) else {
                continue;
            };
            if cell.is_empty() {
                continue;
            }
            match cell.parse::<f64>().ok().or_else(|| nonfinite(cell)) {
                Some(x) => series[*run].push(metric, step, x),
                None => series[*run].note_text(metric, &format!("{cell:?}"), &place),
            }
            .map_err(|m| {
                Error::input(
                    path,
                    &m.place,
                    format_args!("run {:?}: {}", order[*run], m.message),
                )
            })?;
        }
    }
    let runs: Vec<RunRecord> = order
        .into_iter()
        .zip(series)
        .filter(|(_, s)| !s.is_empty())
        .map(|(name, s)| {
            let (metrics, history) = s.finish();
            RunRecord {
                seed: seed_from_name(&name),
                group: None,
                task: None,
                config: BTreeMap::new(),
                metrics,
                history,
                source: path.to_path_buf(),
                place: format!("run {name}"),
                name,
            }
        })
        .collect();
    if runs.is_empty() {
        return Ok(Found::NotARun(
            "a W&B line-panel export with no values".into(),
        ));
    }
    Ok(Found::Runs(runs))
}
