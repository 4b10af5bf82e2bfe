//! Metric series built from rows of logged values (`{"step": 100, "loss": 0.3}`), shared by the
//! readers of JSONL logs, W&B and HF history rows and Lightning CSV.

use super::cells::{nonfinite, number};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};

/// Row keys that give the step, in the order they are tried.
pub const STEP_KEYS: [&str; 3] = ["step", "_step", "global_step"];

/// Row keys that say which run a row belongs to rather than what it measured.
pub const IDENTITY_KEYS: [&str; 10] = [
    "run", "run_id", "id", "name", "group", "method", "seed", "task", "env", "dataset",
];

/// Last value per metric, and each metric's (step, value) history in step order.
pub type Finished = (BTreeMap<String, f64>, BTreeMap<String, Vec<(f64, f64)>>);

/// Per-metric (step, value) points, plus a note of non-numeric values so that a key that holds
/// numbers in one row and text in another is reported instead of silently half-read.
#[derive(Debug, Default)]
pub struct Series {
    points: BTreeMap<String, Vec<(f64, f64)>>,
    text: HashMap<String, (String, String)>,
}

/// The error message for a key that mixes numbers and text, and the place of the text.
#[derive(Debug)]
pub struct Mixed {
    pub place: String,
    pub message: String,
}

impl Series {
    pub fn push(&mut self, key: &str, step: f64, value: f64) -> Result<(), Mixed> {
        if let Some((place, text)) = self.text.get(key) {
            return Err(mixed(key, place, text));
        }
        match self.points.get_mut(key) {
            Some(v) => v.push((step, value)),
            None => {
                self.points.insert(key.to_string(), vec![(step, value)]);
            }
        }
        Ok(())
    }

    /// Notes a non-numeric value; an error when the key already holds numbers.
    pub fn note_text(&mut self, key: &str, text: &str, place: &str) -> Result<(), Mixed> {
        if self.points.contains_key(key) {
            return Err(mixed(key, place, text));
        }
        self.text
            .entry(key.to_string())
            .or_insert_with(|| (place.to_string(), text.to_string()));
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The series in step order (stable: equal steps keep their logging order) and the value at
    /// the last step of each.
    pub fn finish(self) -> Finished {
        let mut last = BTreeMap::new();
        let mut history = self.points;
        for (k, pts) in history.iter_mut() {
            if !pts.is_sorted_by(|a, b| a.0 <= b.0) {
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
            if let Some(&(_, v)) = pts.last() {
                last.insert(k.clone(), v);
            }
        }
        (last, history)
    }

    /// Adds one row of logged values. The step comes from a step key, else `ordinal`.
    /// Underscore keys (W&B's `_runtime`, `_timestamp`) and identity keys are not metrics; nested
    /// objects become dotted keys, except W&B media objects (those with a `_type`).
    pub fn absorb_row(
        &mut self,
        row: &Map<String, Value>,
        ordinal: usize,
        place: &str,
    ) -> Result<(), Mixed> {
        let step = STEP_KEYS
            .iter()
            .find_map(|k| row.get(*k).and_then(number))
            .unwrap_or(ordinal as f64);
        for (k, v) in row {
            if k.starts_with('_') || STEP_KEYS.contains(&k.as_str()) {
                continue;
            }
            if IDENTITY_KEYS.contains(&k.as_str()) {
                continue;
            }
            self.absorb_value(k, v, step, place)?;
        }
        Ok(())
    }

    fn absorb_value(&mut self, key: &str, v: &Value, step: f64, place: &str) -> Result<(), Mixed> {
        match v {
            Value::Number(n) => self.push(key, step, n.as_f64().unwrap_or(f64::NAN)),
            Value::String(s) => match nonfinite(s) {
                Some(x) => self.push(key, step, x),
                None => self.note_text(key, &format!("{s:?}"), place),
            },
            Value::Bool(b) => self.note_text(key, &b.to_string(), place),
            Value::Object(m) if !m.contains_key("_type") => {
                for (k, v) in m {
                    self.absorb_value(&format!("{key}.{k}"), v, step, place)?;
                }
                Ok(())
            }
            Value::Null | Value::Array(_) | Value::Object(_) => Ok(()),
        }
    }
}

fn mixed(key: &str, place: &str, text: &str) -> Mixed {
    Mixed {
        place: place.to_string(),
        message: format!(
            "non-numeric value {text} for key {key:?}, which holds numbers in other rows"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn rows_become_sorted_series_with_last_values() {
        let mut s = Series::default();
        s.absorb_row(
            &row(json!({"step": 20, "loss": 0.5, "phase": "train"})),
            0,
            "line 1",
        )
        .unwrap();
        s.absorb_row(
            &row(json!({"_step": 10, "loss": 0.9, "val": {"acc": 0.7}})),
            1,
            "line 2",
        )
        .unwrap();
        s.absorb_row(&row(json!({"loss": "NaN", "seed": 3})), 30, "line 3")
            .unwrap();
        let (last, hist) = s.finish();
        assert_eq!(hist["loss"][..2], [(10.0, 0.9), (20.0, 0.5)]);
        assert!(last["loss"].is_nan());
        assert_eq!(last["val.acc"], 0.7);
        assert!(!last.contains_key("phase") && !last.contains_key("seed"));
    }

    #[test]
    fn a_key_mixing_numbers_and_text_names_the_text_row() {
        let mut s = Series::default();
        s.absorb_row(&row(json!({"loss": "high"})), 0, "line 1")
            .unwrap();
        let e = s
            .absorb_row(&row(json!({"loss": 0.2})), 1, "line 2")
            .unwrap_err();
        assert_eq!(e.place, "line 1");
        assert!(e.message.contains("\"high\"") && e.message.contains("\"loss\""));
        let mut s = Series::default();
        s.absorb_row(&row(json!({"loss": 0.2})), 0, "line 1")
            .unwrap();
        let e = s
            .absorb_row(&row(json!({"loss": true})), 1, "line 2")
            .unwrap_err();
        assert_eq!(e.place, "line 2");
    }
}
