//! MLflow's file store: `mlruns/<experiment>/<run>/` with `meta.yaml`, `metrics/<key>` (one
//! `timestamp value step` line per point; keys with `/` are sub-directories), `params/<key>` and
//! `tags/<key>` (the file's content is the value).

use super::identity::{seed_from_config, seed_from_name, task_from_config};
use super::{read_file, yaml, Found};
use crate::record::RunRecord;
use crate::{Error, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The tag MLflow stores a run's display name under.
const RUN_NAME_TAG: &str = "mlflow.runName";

/// One run directory.
pub fn read_run(dir: &Path) -> Result<Found> {
    let meta_path = dir.join("meta.yaml");
    let meta = yaml::parse(&meta_path, &read_file(&meta_path)?)?;
    let text = |k: &str| meta.get(k).and_then(super::identity::scalar_text);
    if text("lifecycle_stage").as_deref() == Some("deleted") {
        return Ok(Found::NotARun("an MLflow run marked deleted".into()));
    }
    let run_id = text("run_id")
        .or_else(|| text("run_uuid"))
        .unwrap_or_else(|| super::identity::file_name(dir));

    let mut config = BTreeMap::new();
    for (key, path) in key_files(&dir.join("params"))? {
        config.insert(key, Value::String(value_text(&path)?));
    }
    let mut run_name = text("run_name").filter(|n| !n.is_empty());
    for (key, path) in key_files(&dir.join("tags"))? {
        let value = value_text(&path)?;
        if key == RUN_NAME_TAG {
            run_name = run_name.or(Some(value));
        } else if !key.starts_with("mlflow.") {
            config.insert(format!("tags.{key}"), Value::String(value));
        }
    }

    let mut metrics = BTreeMap::new();
    let mut history = BTreeMap::new();
    for (key, path) in key_files(&dir.join("metrics"))? {
        let mut points = read_metric_file(&path, &key)?;
        // MLflow's own "latest": the maximum by (step, timestamp, value).
        points.sort_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then(a.1.cmp(&b.1))
                .then(a.2.total_cmp(&b.2))
        });
        if let Some(&(_, _, v)) = points.last() {
            metrics.insert(key.clone(), v);
        }
        history.insert(key, points.into_iter().map(|(s, _, v)| (s, v)).collect());
    }

    let name = run_name.unwrap_or(run_id);
    let seed = seed_from_config(&config).or_else(|| seed_from_name(&name));
    Ok(Found::Runs(vec![RunRecord {
        group: None,
        seed,
        task: task_from_config(&config),
        config,
        metrics,
        history,
        source: dir.to_path_buf(),
        place: String::new(),
        name,
    }]))
}

/// The files under `dir`, keyed by their path relative to it with `/` separators
/// (`val/acc`); empty when `dir` does not exist.
fn key_files(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    if dir.is_dir() {
        collect(dir, "", &mut out)
            .map_err(|e| Error::usage(format!("{}: cannot read: {e}", dir.display())))?;
    }
    out.sort();
    Ok(out)
}

fn collect(dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>) -> std::io::Result<()> {
    for e in fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        let key = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        if e.file_type()?.is_dir() {
            collect(&e.path(), &key, out)?;
        } else {
            out.push((key, e.path()));
        }
    }
    Ok(())
}

/// A param or tag file's value (MLflow writes no trailing newline; a hand-made one may).
fn value_text(path: &Path) -> Result<String> {
    let bytes = read_file(path)?;
    let s = String::from_utf8_lossy(&bytes);
    Ok(s.strip_suffix('\n').unwrap_or(&s).to_string())
}

/// `(step, timestamp, value)` per line; a legacy two-field line has step 0.
fn read_metric_file(path: &Path, key: &str) -> Result<Vec<(f64, i64, f64)>> {
    let bytes = read_file(path)?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| Error::input(path, "content", format_args!("not UTF-8 text: {e}")))?;
    let mut points = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let place = format!("line {}", i + 1);
        let fields: Vec<&str> = line.split_ascii_whitespace().collect();
        let (ts, value, step) = match fields[..] {
            [] => continue,
            [ts, value] => (ts, value, "0"),
            [ts, value, step] => (ts, value, step),
            _ => {
                return Err(Error::input(
                    path,
                    place,
                    format_args!(
                        "expected \"timestamp value step\", found {} fields",
                        fields.len()
                    ),
                ))
            }
        };
        let value: f64 = value.parse().map_err(|_| {
            Error::input(
                path,
                &place,
                format_args!("value of metric {key:?} is not a number: {value:?}"),
            )
        })?;
        let ts: i64 = ts.parse().map_err(|_| {
            Error::input(
                path,
                &place,
                format_args!("timestamp is not an integer: {ts:?}"),
            )
        })?;
        let step: f64 = step.parse().map_err(|_| {
            Error::input(path, &place, format_args!("step is not a number: {step:?}"))
        })?;
        points.push((step, ts, value));
    }
    Ok(points)
}
