//! The JSON run object and its parts, as serde types whose errors carry the line and column:
//! our own run files, W&B API dumps (`{"id", "name", "config", "summary", "history"}`) and HF
//! `trainer_state.json` (`log_history`) share this one shape with optional fields.

use super::cells::{not_a_number, number, Cell};
use super::identity::{flatten, scalar_text, seed_from_config, seed_from_name, task_from_config};
use super::series::Series;
use crate::record::RunRecord;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// Every key a run object may have; all optional, unknown keys ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(default, expecting = "a run object")]
pub struct RunObject {
    pub run_id: Option<Ident>,
    pub id: Option<Ident>,
    pub run: Option<Ident>,
    pub name: Option<Ident>,
    pub group: Option<Ident>,
    pub method: Option<Ident>,
    pub seed: Option<Ident>,
    pub task: Option<Ident>,
    pub env: Option<Ident>,
    pub dataset: Option<Ident>,
    pub config: Option<Config>,
    /// Our format: final values; every value must be a number.
    pub metrics: Option<StrictMetrics>,
    /// W&B summary: numbers are kept, media and text are skipped.
    pub summary: Option<Summary>,
    pub history: Option<History>,
    /// HF `trainer_state.json`.
    pub log_history: Option<Rows>,
    pub global_step: Option<Value>,
    pub epoch: Option<Value>,
    pub max_steps: Option<Value>,
    pub num_train_epochs: Option<Value>,
    pub train_batch_size: Option<Value>,
    pub best_metric: Option<Value>,
    pub best_model_checkpoint: Option<Value>,
}

impl RunObject {
    /// Whether this object is a run at all (it logs something), rather than some other JSON.
    pub fn is_run(&self) -> bool {
        self.metrics.is_some()
            || self.summary.is_some()
            || self.history.is_some()
            || self.log_history.is_some()
    }

    /// The record, with `fallback_name` used when the object names no run. The file's name
    /// may give the seed only when the file holds this one run (`alone`); `root` is the
    /// directory the user named, if the file was found by walking it.
    pub fn into_record(
        self,
        path: &Path,
        root: Option<&Path>,
        place: String,
        fallback_name: String,
        alone: bool,
    ) -> RunRecord {
        let is_trainer_state = self.log_history.is_some();
        let mut config = self.config.map(|c| flatten(c.0)).unwrap_or_default();
        if is_trainer_state {
            for (k, v) in [
                ("global_step", self.global_step),
                ("epoch", self.epoch),
                ("max_steps", self.max_steps),
                ("num_train_epochs", self.num_train_epochs),
                ("train_batch_size", self.train_batch_size),
                ("best_metric", self.best_metric),
                ("best_model_checkpoint", self.best_model_checkpoint),
            ] {
                if let Some(v) = v.filter(|v| !v.is_null()) {
                    config.insert(k.to_string(), v);
                }
            }
        }
        let name = [self.name, self.run_id, self.id, self.run]
            .into_iter()
            .flatten()
            .next()
            .map(|i| i.0)
            .unwrap_or(fallback_name);
        let seed = self
            .seed
            .map(|s| s.0)
            .or_else(|| seed_from_config(&config))
            .or_else(|| seed_from_name(&name))
            .or_else(|| {
                alone
                    .then(|| super::identity::seed_from_path(path, root))
                    .flatten()
            });
        let task = [self.task, self.env, self.dataset]
            .into_iter()
            .flatten()
            .next()
            .map(|i| i.0)
            .or_else(|| task_from_config(&config));
        let (from_rows, (mut metrics, mut history)) = match (self.history, self.log_history) {
            (Some(History { series, rows }), _) => (rows, series.finish()),
            (None, Some(Rows(series))) => (true, series.finish()),
            (None, None) => (false, Default::default()),
        };
        if let Some(Summary(summary)) = self.summary {
            if from_rows {
                drop_fill_nans(&mut history, &summary);
            }
            metrics.extend(summary);
        }
        if let Some(StrictMetrics(m)) = self.metrics {
            metrics.extend(m);
        }
        RunRecord {
            name,
            group: self.group.or(self.method).map(|g| g.0),
            seed,
            task,
            config,
            metrics,
            history,
            source: path.to_path_buf(),
            place,
        }
    }
}

/// `run.history()` is a pandas frame: a key not logged at a row's step is NaN there, and
/// `json.dumps` keeps that NaN. Where the summary's value of a key is finite the run did not end
/// diverged, so NaN points in its rows are taken as that fill and dropped.
fn drop_fill_nans(
    history: &mut BTreeMap<String, Vec<(f64, f64)>>,
    summary: &BTreeMap<String, f64>,
) {
    history.retain(|key, points| {
        if summary.get(key).is_some_and(|v| v.is_finite()) {
            points.retain(|p| !p.1.is_nan());
        }
        !points.is_empty()
    });
}

/// A run's name, seed or group: a string or a number, kept as text.
#[derive(Debug)]
pub struct Ident(pub String);

impl<'de> Deserialize<'de> for Ident {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        scalar_text(&v)
            .map(Ident)
            .ok_or_else(|| de::Error::custom(format!("expected a name or a number, found {v}")))
    }
}

/// `"config": {...}`: an object, whatever it holds.
#[derive(Debug, Default)]
pub struct Config(pub Map<String, Value>);

impl<'de> Deserialize<'de> for Config {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Config;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"config\" to be an object of settings")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Config, A::Error> {
                Map::deserialize(de::value::MapAccessDeserializer::new(map)).map(Config)
            }
        }
        d.deserialize_map(V)
    }
}

/// `"metrics": {"val_loss": 0.31}`: every value a number (or null, which is skipped).
#[derive(Debug, Default)]
pub struct StrictMetrics(pub BTreeMap<String, f64>);

impl<'de> Deserialize<'de> for StrictMetrics {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StrictMetrics;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of metric names to numbers")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StrictMetrics, A::Error> {
                let mut out = BTreeMap::new();
                while let Some(key) = map.next_key::<String>()? {
                    match map.next_value::<Cell>()? {
                        Cell::Num(v) => {
                            out.insert(key, v);
                        }
                        Cell::Null => {}
                        other => return Err(not_a_number(format_args!("metric {key:?}"), &other)),
                    }
                }
                Ok(StrictMetrics(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// A W&B-style summary: numbers kept (nested objects flattened with dots), everything else
/// (media objects, strings, underscore keys) skipped.
#[derive(Debug, Default)]
pub struct Summary(pub BTreeMap<String, f64>);

impl Summary {
    pub fn from_map(map: Map<String, Value>) -> Self {
        let mut out = BTreeMap::new();
        for (k, v) in map {
            if !k.starts_with('_') {
                summary_value(k, v, &mut out);
            }
        }
        Summary(out)
    }
}

fn summary_value(key: String, v: Value, out: &mut BTreeMap<String, f64>) {
    match v {
        Value::Object(m) if !m.contains_key("_type") => {
            for (k, v) in m {
                summary_value(format!("{key}.{k}"), v, out);
            }
        }
        v => {
            if let Some(x) = number(&v) {
                out.insert(key, x);
            }
        }
    }
}

impl<'de> Deserialize<'de> for Summary {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Summary;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"summary\" to be an object of metric names to values")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Summary, A::Error> {
                Map::deserialize(de::value::MapAccessDeserializer::new(map)).map(Summary::from_map)
            }
        }
        d.deserialize_map(V)
    }
}

/// `"history"`: either our `{"metric": [[step, value], ...]}` (a bare value gets its index as
/// step), or W&B rows `[{"_step": 0, "metric": value, ...}, ...]`.
#[derive(Debug, Default)]
pub struct History {
    pub series: Series,
    /// Whether it came as rows (a W&B dump) rather than per-metric lists.
    pub rows: bool,
}

impl<'de> Deserialize<'de> for History {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = History;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of metric names to [step, value] lists, or a list of rows")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<History, A::Error> {
                let mut series = Series::default();
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value_seed(Points {
                        key: &key,
                        series: &mut series,
                    })?;
                }
                Ok(History {
                    series,
                    rows: false,
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<History, A::Error> {
                RowsVisitor
                    .visit_seq(seq)
                    .map(|Rows(series)| History { series, rows: true })
            }
        }
        d.deserialize_any(V)
    }
}

/// The points of one metric in our history format.
struct Points<'a> {
    key: &'a str,
    series: &'a mut Series,
}

impl<'de> DeserializeSeed<'de> for Points<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Points<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a list of [step, value] pairs for {:?}", self.key)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        while let Some(point) = seq.next_element::<Point>()? {
            let (step, cell) = match point {
                Point::Pair(s, c) => (s, c),
                Point::Bare(c) => (i as f64, c),
            };
            match cell {
                Cell::Num(v) => self
                    .series
                    .push(self.key, step, v)
                    .map_err(|m| de::Error::custom(m.message))?,
                Cell::Null => {}
                other => {
                    return Err(not_a_number(
                        format_args!("history {:?} point {}", self.key, i + 1),
                        &other,
                    ))
                }
            }
            i += 1;
        }
        Ok(())
    }
}

/// `[step, value]` or a bare value.
enum Point {
    Pair(f64, Cell),
    Bare(Cell),
}

impl<'de> Deserialize<'de> for Point {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Point;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("[step, value] or a number")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Point, A::Error> {
                let step = match seq.next_element::<Cell>()? {
                    Some(Cell::Num(s)) => s,
                    _ => return Err(de::Error::custom("a history point's step is not a number")),
                };
                let Some(value) = seq.next_element::<Cell>()? else {
                    return Err(de::Error::custom("a history point has a step but no value"));
                };
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    return Err(de::Error::custom(
                        "a history point has more than two entries; expected [step, value]",
                    ));
                }
                Ok(Point::Pair(step, value))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Point, E> {
                Ok(Point::Bare(Cell::Num(v as f64)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Point, E> {
                Ok(Point::Bare(Cell::Num(v as f64)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Point, E> {
                Ok(Point::Bare(Cell::Num(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Point, E> {
                Ok(Point::Bare(
                    super::cells::nonfinite(v).map_or_else(|| Cell::Text(v.to_string()), Cell::Num),
                ))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Point, E> {
                Ok(Point::Bare(Cell::Other(if v { "true" } else { "false" })))
            }
            fn visit_unit<E>(self) -> Result<Point, E> {
                Ok(Point::Bare(Cell::Null))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Point, A::Error> {
                let _ =
                    Map::<String, Value>::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(Point::Bare(Cell::Other("an object")))
            }
        }
        d.deserialize_any(V)
    }
}

/// A list of logged rows (W&B `scan_history()`, HF `log_history`).
#[derive(Debug, Default)]
pub struct Rows(pub Series);

struct RowsVisitor;

impl<'de> Visitor<'de> for RowsVisitor {
    type Value = Rows;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of rows (objects of metric names to values)")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Rows, A::Error> {
        let mut series = Series::default();
        let mut i = 0usize;
        while let Some(row) = seq.next_element::<Map<String, Value>>()? {
            let place = format!("row {}", i + 1);
            series
                .absorb_row(&row, i, &place)
                .map_err(|m| de::Error::custom(format!("{}: {}", m.place, m.message)))?;
            i += 1;
        }
        Ok(Rows(series))
    }
}

impl<'de> Deserialize<'de> for Rows {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(RowsVisitor)
    }
}

/// A whole JSON file: one run object, or a list of them (a W&B project dump).
pub enum Document {
    One(Box<RunObject>),
    Many(Vec<RunObject>),
}

impl<'de> Deserialize<'de> for Document {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Document;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a run object or a list of run objects")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Document, A::Error> {
                RunObject::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|r| Document::One(Box::new(r)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Document, A::Error> {
                let mut runs = Vec::new();
                while let Some(r) = seq.next_element::<RunObject>()? {
                    runs.push(r);
                }
                Ok(Document::Many(runs))
            }
        }
        d.deserialize_any(V)
    }
}
