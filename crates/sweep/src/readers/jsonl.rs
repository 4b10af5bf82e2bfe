//! JSON Lines: one run object per line, history rows (`{"step": 100, "loss": 0.3}`, grouped by a
//! `run` field or else one run per file), or long-form rows
//! (`{"run": "a", "step": 100, "metric": "val/acc", "value": 0.8}`).

use super::cells::{json_error, number, sanitize_nonfinite};
use super::identity::{file_stem, scalar_text, seed_from_name, seed_from_path};
use super::run_object::RunObject;
use super::series::{Series, STEP_KEYS};
use super::Found;
use crate::record::RunRecord;
use crate::{Error, Result};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::Path;

/// Keys that mark a line as a whole run object rather than a row.
const RUN_OBJECT_KEYS: [&str; 4] = ["metrics", "summary", "history", "log_history"];

/// Keys that name the run a row belongs to.
const RUN_KEYS: [&str; 3] = ["run", "run_id", "name"];

/// A run assembled from rows.
#[derive(Default)]
struct RowRun {
    name: Option<String>,
    series: Series,
    rows: usize,
    first_line: usize,
    group: Option<String>,
    seed: Option<String>,
    task: Option<String>,
}

impl RowRun {
    fn note_identity(&mut self, row: &Map<String, Value>) {
        let text = |keys: &[&str]| keys.iter().find_map(|k| row.get(*k).and_then(scalar_text));
        if self.group.is_none() {
            self.group = text(&["group", "method"]);
        }
        if self.seed.is_none() {
            self.seed = text(&["seed"]);
        }
        if self.task.is_none() {
            self.task = text(&["task", "env", "dataset"]);
        }
    }
}

pub fn read(path: &Path, bytes: &[u8], root: Option<&Path>) -> Result<Found> {
    let mut records = Vec::new();
    let mut runs: Vec<RowRun> = Vec::new();
    let mut by_name: HashMap<Option<String>, usize> = HashMap::new();
    for (idx, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line_no = idx + 1;
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let clean = sanitize_nonfinite(raw);
        let row: Map<String, Value> =
            serde_json::from_slice(&clean).map_err(|e| json_error(path, &e, idx))?;
        let place = format!("line {line_no}");
        if RUN_OBJECT_KEYS.iter().any(|k| row.contains_key(*k)) {
            let run = RunObject::deserialize(Value::Object(row))
                .map_err(|e| Error::input(path, &place, e))?;
            let fallback = format!("{} line {line_no}", file_stem(path));
            records.push(run.into_record(path, root, place, fallback, false));
            continue;
        }
        let name = RUN_KEYS
            .iter()
            .find_map(|k| row.get(*k).and_then(scalar_text));
        let slot = *by_name.entry(name.clone()).or_insert_with(|| {
            runs.push(RowRun {
                name,
                first_line: line_no,
                ..RowRun::default()
            });
            runs.len() - 1
        });
        let run = &mut runs[slot];
        run.note_identity(&row);
        let ordinal = run.rows;
        run.rows += 1;
        if let (Some(metric), Some(value)) = (row.get("metric"), row.get("value")) {
            let Some(metric) = scalar_text(metric) else {
                return Err(Error::input(path, &place, "\"metric\" is not a name"));
            };
            if value.is_null() {
                continue;
            }
            let Some(v) = number(value) else {
                return Err(Error::input(
                    path,
                    &place,
                    format_args!("value of metric {metric:?} is not a number: {value}"),
                ));
            };
            let step = STEP_KEYS
                .iter()
                .find_map(|k| row.get(*k).and_then(number))
                .unwrap_or(ordinal as f64);
            run.series
                .push(&metric, step, v)
                .map_err(|m| Error::input(path, &m.place, m.message))?;
        } else {
            run.series
                .absorb_row(&row, ordinal, &place)
                .map_err(|m| Error::input(path, &m.place, m.message))?;
        }
    }
    if records.is_empty() && runs.iter().all(|r| r.series.is_empty()) {
        return Ok(Found::NotARun(if runs.is_empty() {
            "an empty JSON Lines file".into()
        } else {
            "JSON Lines whose rows hold no numbers (a log of messages?)".into()
        }));
    }
    let stem = file_stem(path);
    let single = runs.len() == 1;
    for run in runs {
        if run.series.is_empty() {
            return Err(Error::input(
                path,
                format_args!("line {}", run.first_line),
                "rows with no numeric values: nothing to compare",
            ));
        }
        let from_file = run.name.is_none();
        let name = run.name.unwrap_or_else(|| stem.clone());
        let seed = run
            .seed
            .or_else(|| seed_from_name(&name))
            .or_else(|| from_file.then(|| seed_from_path(path, root)).flatten());
        let (metrics, history) = run.series.finish();
        records.push(RunRecord {
            place: if single {
                String::new()
            } else {
                format!("run {name}")
            },
            name,
            group: run.group,
            seed,
            task: run.task,
            config: Default::default(),
            metrics,
            history,
            source: path.to_path_buf(),
        });
    }
    Ok(Found::Runs(records))
}
