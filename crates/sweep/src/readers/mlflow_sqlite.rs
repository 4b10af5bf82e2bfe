//! MLflow's SQLite tracking store (`mlflow.db`, the default since MLflow 3.7): tables `runs`,
//! `metrics` (every point; `is_nan` marks NaN, which SQL cannot store), `params`, `tags`.

use super::identity::{seed_from_config, seed_from_name, task_from_config};
use super::Found;
use crate::record::RunRecord;
use crate::{Error, Result};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Tables a database must have to be read as an MLflow store.
const REQUIRED_TABLES: [&str; 4] = ["runs", "metrics", "params", "tags"];

/// The tag MLflow stores a run's display name under.
const RUN_NAME_TAG: &str = "mlflow.runName";

/// A run being assembled: its record, and its metric points as (step, timestamp, value).
struct Draft {
    record: RunRecord,
    points: BTreeMap<String, Vec<(f64, i64, f64)>>,
}

pub fn read(path: &Path) -> Result<Found> {
    let sql = |e: rusqlite::Error| Error::input(path, "SQLite", e);
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql)?;
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(|e| Error::input(path, "file", format_args!("not an SQLite database: {e}")))?;
    let missing: Vec<&str> = REQUIRED_TABLES
        .iter()
        .copied()
        .filter(|t| !tables.iter().any(|have| have == t))
        .collect();
    if !missing.is_empty() {
        return Ok(Found::NotARun(format!(
            "an SQLite database without MLflow's tables (missing: {})",
            missing.join(", ")
        )));
    }
    let mut store = Store {
        drafts: Vec::new(),
        index: HashMap::new(),
    };
    store.read_runs(&conn, path)?;
    store.read_params_and_tags(&conn, path)?;
    store.read_metrics(&conn, path)?;
    Ok(Found::Runs(
        store.drafts.into_iter().map(Draft::finish).collect(),
    ))
}

/// The runs read so far, and where each run id is among them.
struct Store {
    drafts: Vec<Draft>,
    index: HashMap<String, usize>,
}

impl Store {
    /// Every run that is not deleted, in start order.
    fn read_runs(&mut self, conn: &Connection, path: &Path) -> Result<()> {
        let sql = |e: rusqlite::Error| Error::input(path, "SQLite", e);
        let mut stmt = conn
            .prepare(
                "SELECT run_uuid, name, lifecycle_stage FROM runs \
                 ORDER BY start_time, run_uuid",
            )
            .map_err(sql)?;
        let mut rows = stmt.query([]).map_err(sql)?;
        while let Some(r) = rows.next().map_err(sql)? {
            let id: String = r.get(0).map_err(sql)?;
            let name: Option<String> = r.get(1).map_err(sql)?;
            let stage: Option<String> = r.get(2).map_err(sql)?;
            if stage.as_deref() == Some("deleted") {
                continue;
            }
            self.index.insert(id.clone(), self.drafts.len());
            self.drafts.push(Draft {
                record: RunRecord {
                    name: name.filter(|n| !n.is_empty()).unwrap_or_else(|| id.clone()),
                    group: None,
                    seed: None,
                    task: None,
                    config: BTreeMap::new(),
                    metrics: BTreeMap::new(),
                    history: BTreeMap::new(),
                    source: path.to_path_buf(),
                    place: format!("run {id}"),
                },
                points: BTreeMap::new(),
            });
        }
        Ok(())
    }

    /// Params into the config; tags into the config as `tags.<key>`, the run-name tag as the name.
    fn read_params_and_tags(&mut self, conn: &Connection, path: &Path) -> Result<()> {
        let sql = |e: rusqlite::Error| Error::input(path, "SQLite", e);
        for (table, is_tag) in [("params", false), ("tags", true)] {
            let mut stmt = conn
                .prepare(&format!("SELECT run_uuid, key, value FROM {table}"))
                .map_err(sql)?;
            let mut rows = stmt.query([]).map_err(sql)?;
            while let Some(r) = rows.next().map_err(sql)? {
                let id: String = r.get(0).map_err(sql)?;
                let Some(&i) = self.index.get(&id) else {
                    continue;
                };
                let key: String = r.get(1).map_err(sql)?;
                let value: Option<String> = r.get(2).map_err(sql)?;
                let value = value.unwrap_or_default();
                let rec = &mut self.drafts[i].record;
                if !is_tag {
                    rec.config.insert(key, Value::String(value));
                } else if key == RUN_NAME_TAG {
                    if rec.name == id {
                        rec.name = value;
                    }
                } else if !key.starts_with("mlflow.") {
                    rec.config
                        .insert(format!("tags.{key}"), Value::String(value));
                }
            }
        }
        Ok(())
    }

    /// Every metric point; a value that is not a number is an error naming its run and step.
    fn read_metrics(&mut self, conn: &Connection, path: &Path) -> Result<()> {
        let sql = |e: rusqlite::Error| Error::input(path, "SQLite", e);
        let mut stmt = conn
            .prepare("SELECT run_uuid, key, value, timestamp, step, is_nan FROM metrics")
            .map_err(sql)?;
        let mut rows = stmt.query([]).map_err(sql)?;
        while let Some(r) = rows.next().map_err(sql)? {
            let id: String = r.get(0).map_err(sql)?;
            let Some(&i) = self.index.get(&id) else {
                continue;
            };
            let key: String = r.get(1).map_err(sql)?;
            let ts: i64 = r.get::<_, Option<i64>>(3).map_err(sql)?.unwrap_or(0);
            let step: i64 = r.get::<_, Option<i64>>(4).map_err(sql)?.unwrap_or(0);
            let is_nan: bool = r.get::<_, Option<bool>>(5).map_err(sql)?.unwrap_or(false);
            let value = match r.get_ref(2).map_err(sql)? {
                _ if is_nan => f64::NAN,
                ValueRef::Real(f) => f,
                ValueRef::Integer(n) => n as f64,
                other => {
                    let shown = match other {
                        ValueRef::Text(t) => format!("{:?}", String::from_utf8_lossy(t)),
                        ValueRef::Null => "NULL".to_string(),
                        _ => "a blob".to_string(),
                    };
                    return Err(Error::input(
                        path,
                        format_args!("table metrics, run {id}, metric {key:?}, step {step}"),
                        format_args!("value is not a number: {shown}"),
                    ));
                }
            };
            self.drafts[i]
                .points
                .entry(key)
                .or_default()
                .push((step as f64, ts, value));
        }
        Ok(())
    }
}

impl Draft {
    /// The record with its metrics (MLflow's "latest" of each), histories, seed and task.
    fn finish(self) -> RunRecord {
        let Draft { mut record, points } = self;
        for (key, mut pts) in points {
            // MLflow's own "latest": the maximum by (step, timestamp, value).
            pts.sort_by(|a, b| {
                a.0.total_cmp(&b.0)
                    .then(a.1.cmp(&b.1))
                    .then(a.2.total_cmp(&b.2))
            });
            if let Some(&(_, _, v)) = pts.last() {
                record.metrics.insert(key.clone(), v);
            }
            record
                .history
                .insert(key, pts.into_iter().map(|(s, _, v)| (s, v)).collect());
        }
        record.seed = seed_from_config(&record.config).or_else(|| seed_from_name(&record.name));
        record.task = task_from_config(&record.config);
        record
    }
}
