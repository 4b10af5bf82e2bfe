//! YAML side files (W&B `config.yaml`, Lightning `hparams.yaml`, MLflow `meta.yaml`) read into
//! JSON values, with errors that name the line and column.

use crate::{Error, Result};
use serde_json::{Map, Number, Value};
use std::path::Path;

/// Parses a YAML document into a JSON value. Tags (`!!python/object:…`) are dropped and their
/// content kept; non-finite floats become strings, which JSON cannot hold as numbers.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Value> {
    mldebug_text::yaml_depth::check(bytes).map_err(|deep| {
        Error::input(
            path,
            format_args!("line {}, column {}", deep.line, deep.column),
            format_args!(
                "YAML nested more than {} levels deep",
                mldebug_text::yaml_depth::MAX_FLOW_DEPTH
            ),
        )
    })?;
    let y: serde_norway::Value = serde_norway::from_slice(bytes).map_err(|e| {
        let place = e.location().map_or_else(
            || "YAML".to_string(),
            |l| format!("line {}, column {}", l.line(), l.column()),
        );
        Error::input(path, place, format_args!("YAML syntax error: {e}"))
    })?;
    Ok(to_json(y))
}

fn to_json(y: serde_norway::Value) -> Value {
    use serde_norway::Value as Y;
    match y {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::Number(i.into())
            } else if let Some(f) = n.as_f64() {
                Number::from_f64(f).map_or_else(|| Value::String(n.to_string()), Value::Number)
            } else {
                Value::String(n.to_string())
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(s) => Value::Array(s.into_iter().map(to_json).collect()),
        Y::Mapping(m) => Value::Object(
            m.into_iter()
                .map(|(k, v)| (key_text(k), to_json(v)))
                .collect::<Map<_, _>>(),
        ),
        Y::Tagged(t) => to_json(t.value),
    }
}

fn key_text(k: serde_norway::Value) -> String {
    match to_json(k) {
        Value::String(s) => s,
        other => other.to_string(),
    }
}
