//! A local W&B run directory (`wandb/run-<date>_<time>-<id>/`, `offline-run-…`): the last value
//! per key from `files/wandb-summary.json`, the config from `files/config.yaml` (each key maps to
//! `{value: …}`), and history rows from `files/wandb-history.jsonl` when an older SDK wrote one.

use super::cells::{json_error, sanitize_nonfinite};
use super::identity::{flatten_into, seed_from_config, seed_from_name, task_from_config};
use super::run_object::Summary;
use super::series::Series;
use super::{read_file, yaml, Found};
use crate::sweep::record::RunRecord;
use crate::{Error, Result};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// Config keys W&B adds for itself.
const INTERNAL_CONFIG_KEYS: [&str; 2] = ["wandb_version", "_wandb"];

pub fn read(dir: &Path) -> Result<Found> {
    let files = dir.join("files");
    let summary_path = files.join("wandb-summary.json");
    let history_path = files.join("wandb-history.jsonl");
    let config_path = files.join("config.yaml");

    let summary = if summary_path.is_file() {
        let bytes = read_file(&summary_path)?;
        let map: Map<String, Value> = serde_json::from_slice(&sanitize_nonfinite(&bytes))
            .map_err(|e| json_error(&summary_path, &e, 0))?;
        Some(Summary::from_map(map).0)
    } else {
        None
    };
    let history = if history_path.is_file() {
        Some(read_history(&history_path)?)
    } else {
        None
    };
    if summary.is_none() && history.is_none() {
        return Ok(Found::NotARun(
            "a W&B run directory without files/wandb-summary.json (the run may have stopped \
             before its first log, or still be running)"
                .into(),
        ));
    }

    let mut config = BTreeMap::new();
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
    let name = dir_name
        .rsplit_once('-')
        .map_or(dir_name.as_str(), |(_, id)| id)
        .to_string();
    let (mut metrics, history) = history.map(Series::finish).unwrap_or_default();
    metrics.extend(summary.unwrap_or_default());
    let seed = seed_from_config(&config).or_else(|| {
        dir.ancestors()
            .skip(1)
            .take(2)
            .filter_map(|d| d.file_name()?.to_str())
            .find_map(seed_from_name)
    });
    Ok(Found::Runs(vec![RunRecord {
        name,
        group: None,
        seed,
        task: task_from_config(&config),
        config,
        metrics,
        history,
        source: dir.to_path_buf(),
        place: String::new(),
    }]))
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
