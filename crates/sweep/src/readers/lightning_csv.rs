//! Lightning's `CSVLogger` output: `metrics.csv`, whose header is the union of the logged keys
//! (with `epoch` and `step`) and whose rows are sparse, and `hparams.yaml` beside it.

use super::csv::Record;
use super::identity::{
    dir_run_name, flatten_into, seed_from_config, seed_from_path, task_from_config,
};
use super::series::Series;
use super::{read_file, yaml, Found};
use crate::record::RunRecord;
use crate::{Error, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Columns that give the step, in the order they are tried.
const STEP_COLUMNS: [&str; 2] = ["step", "epoch"];

/// Whether a CSV header is Lightning's (it has `step` or `epoch`).
pub fn is_lightning(header: &[String]) -> bool {
    header.iter().any(|h| STEP_COLUMNS.contains(&h.as_str()))
}

/// One run from the records of a `metrics.csv` (header first).
pub fn read(path: &Path, records: &[Record], root: Option<&Path>) -> Result<Found> {
    let Some((header, rows)) = records.split_first() else {
        return Ok(Found::NotARun("an empty CSV file".into()));
    };
    let header = &header.cells;
    let step_col = STEP_COLUMNS
        .iter()
        .find_map(|s| header.iter().position(|h| h == s));
    let mut series = Series::default();
    for (i, row) in rows.iter().enumerate() {
        let place = format!("line {}", row.line);
        let cells = &row.cells;
        if cells.len() > header.len() {
            return Err(Error::input(
                path,
                place,
                format_args!(
                    "{} cells, but the header has {} columns",
                    cells.len(),
                    header.len()
                ),
            ));
        }
        let step = match step_col.and_then(|c| cells.get(c)).map(|s| s.trim()) {
            Some(s) if !s.is_empty() => s.parse::<f64>().map_err(|_| {
                Error::input(path, &place, format_args!("step is not a number: {s:?}"))
            })?,
            _ => i as f64,
        };
        for (col, cell) in cells.iter().enumerate() {
            let cell = cell.trim();
            if cell.is_empty() || Some(col) == step_col {
                continue;
            }
            let key = &header[col];
            match cell.parse::<f64>() {
                Ok(v) => series.push(key, step, v),
                Err(_) => series.note_text(key, &format!("{cell:?}"), &place),
            }
            .map_err(|m| Error::input(path, &m.place, m.message))?;
        }
    }
    if series.is_empty() {
        return Ok(Found::NotARun("a CSV file with no numeric values".into()));
    }

    let dir = path.parent().unwrap_or(Path::new("."));
    let config = read_hparams_yaml(dir)?;
    let name = dir_run_name(dir, root);
    let (metrics, history) = series.finish();
    Ok(Found::Runs(vec![RunRecord {
        name,
        group: None,
        seed: seed_from_config(&config).or_else(|| seed_from_path(path, root)),
        task: task_from_config(&config),
        config,
        metrics,
        history,
        source: path.to_path_buf(),
        place: String::new(),
    }]))
}

/// Lightning's `hparams.yaml` in a run directory (written by its CSV and TensorBoard loggers),
/// flattened; empty when there is none.
pub fn read_hparams_yaml(dir: &Path) -> Result<BTreeMap<String, Value>> {
    let mut config = BTreeMap::new();
    let hparams = dir.join("hparams.yaml");
    if hparams.is_file() {
        match yaml::parse(&hparams, &read_file(&hparams)?)? {
            Value::Object(m) => {
                for (k, v) in m {
                    flatten_into(&k, v, &mut config);
                }
            }
            Value::Null => {}
            _ => {
                return Err(Error::input(
                    &hparams,
                    "line 1",
                    "expected a mapping of hyperparameters",
                ))
            }
        }
    }
    Ok(config)
}
