//! A local W&B run directory (`wandb/run-<date>_<time>-<id>/`, `offline-run-…`): the binary run
//! log `run-<id>.wandb` (history, config, summary, group and name; the only record an offline
//! run has), then, where present, the last value per key from `files/wandb-summary.json`, the
//! config from `files/config.yaml` (each key maps to `{value: …}`), and history rows from
//! `files/wandb-history.jsonl`, which SDKs before 2020 wrote.

use super::cells::{json_error, sanitize_nonfinite};
use super::identity::{flatten_into, seed_from_config, seed_from_dirs, task_from_config};
use super::run_object::Summary;
use super::series::Series;
use super::{read_file, yaml, Found};
use crate::record::RunRecord;
use crate::{Error, Result};
use serde_json::{Map, Value};
use std::path::Path;

/// Config keys W&B adds for itself.
const INTERNAL_CONFIG_KEYS: [&str; 2] = ["wandb_version", "_wandb"];

pub fn read(dir: &Path, root: Option<&Path>) -> Result<Found> {
    let files = dir.join("files");
    let summary_path = files.join("wandb-summary.json");
    let history_path = files.join("wandb-history.jsonl");
    let config_path = files.join("config.yaml");

    let log_path = run_log(dir)?;
    let log = match &log_path {
        Some(p) => Some(super::wandb_log::read(p, &read_file(p)?)?),
        None => None,
    };

    let summary = if summary_path.is_file() {
        let bytes = read_file(&summary_path)?;
        let map: Map<String, Value> = serde_json::from_slice(&sanitize_nonfinite(&bytes))
            .map_err(|e| json_error(&summary_path, &e, 0))?;
        Some(Summary::from_map(map).0)
    } else {
        None
    };
    let history = match &log {
        Some(l) if !l.history.is_empty() => None,
        _ if history_path.is_file() => Some(read_history(&history_path)?),
        _ => None,
    };
    if summary.is_none() && history.is_none() && log.is_none() {
        return Ok(Found::NotARun(
            "a W&B run directory with neither a run-<id>.wandb log nor \
             files/wandb-summary.json (the run may have stopped before its first log)"
                .into(),
        ));
    }
    let log = log.unwrap_or_default();

    let mut config = log.config;
    if config_path.is_file() {
        let doc = yaml::parse(&config_path, &read_file(&config_path)?)?;
        let Value::Object(top) = doc else {
            return Err(Error::input(
                &config_path,
                "line 1",
                "expected a mapping of config keys",
            ));
        };
        for (k, v) in top {
            if INTERNAL_CONFIG_KEYS.contains(&k.as_str()) {
                continue;
            }
            let v = match v {
                Value::Object(mut m) if m.contains_key("value") => {
                    m.remove("value").unwrap_or(Value::Null)
                }
                other => other,
            };
            flatten_into(&k, v, &mut config);
        }
    }

    let dir_name = super::identity::file_name(dir);
    // run-20240101_120000-<id>: the id is what the W&B UI and API call the run.
    let id = dir_name
        .rsplit_once('-')
        .map_or(dir_name.as_str(), |(_, id)| id)
        .to_string();
    let name = log.display_name.or(log.run_id).unwrap_or(id);
    let (mut metrics, history) = history.unwrap_or(log.history).finish();
    metrics.extend(log.summary);
    metrics.extend(summary.unwrap_or_default());
    // The run directory's own name holds a date and an id, never a seed; look above it, but not
    // above the directory the user named.
    let seed = seed_from_config(&config).or_else(|| {
        let parent = dir.parent().filter(|_| root != Some(dir))?;
        seed_from_dirs(parent, root)
    });
    Ok(Found::Runs(vec![RunRecord {
        name,
        group: log.group,
        seed,
        task: task_from_config(&config),
        config,
        metrics,
        history,
        source: dir.to_path_buf(),
        place: String::new(),
    }]))
}

/// The run's binary log, `run-<id>.wandb`, if there is one.
fn run_log(dir: &Path) -> Result<Option<std::path::PathBuf>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::usage(format!("{}: cannot read: {e}", dir.display())))?;
    let mut logs: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "wandb") && p.is_file())
        .collect();
    logs.sort();
    Ok(logs.pop())
}

fn read_history(path: &Path) -> Result<Series> {
    let bytes = read_file(path)?;
    let mut series = Series::default();
    for (idx, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let row: Map<String, Value> = serde_json::from_slice(&sanitize_nonfinite(raw))
            .map_err(|e| json_error(path, &e, idx))?;
        series
            .absorb_row(&row, idx, &format!("line {}", idx + 1))
            .map_err(|m| Error::input(path, &m.place, m.message))?;
    }
    Ok(series)
}
