//! The one JSON envelope around everything mldebug writes as JSON: every command's `--json`
//! output and the report a harness hands back to the CLI.
//!
//! ```json
//! {"schema_version": 3, "command": "check", ...the command's own fields}
//! ```
//!
//! `schema_version` is one number for all of them: fields are only ever added within a version,
//! and anything else (a field renamed, removed or changing type) bumps it. `command` is the
//! subcommand that wrote the document, as typed (`check`, `sweep-compare`, ...). The fields of
//! each command are described by `schema/output.schema.json` in the repository, which a test
//! validates every command's output against.
//!
//! Versions: 1 was the knowledge commands' documents; 2 the check report with non-finite numbers
//! as strings; 3 puts every document in this envelope (the `command` field, one version for
//! all, `zoo` as `{"models": [...]}`).

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The version of every JSON document mldebug writes.
pub const SCHEMA_VERSION: u32 = 3;

/// `{"schema_version": ..., "command": ..., ...payload}`. The payload must serialize as a JSON
/// object (a struct or a map): its fields are written beside the two envelope fields.
#[derive(Debug, Serialize)]
pub struct Envelope<'a, T: Serialize> {
    pub schema_version: u32,
    pub command: &'a str,
    #[serde(flatten)]
    pub payload: &'a T,
}

/// The document as pretty-printed JSON, with a final newline.
pub fn to_json<T: Serialize>(command: &str, payload: &T) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string_pretty(&Envelope {
        schema_version: SCHEMA_VERSION,
        command,
        payload,
    })?;
    text.push('\n');
    Ok(text)
}

/// The document on one line, with a final newline: one event of a stream (`doctor --watch`).
pub fn to_json_line<T: Serialize>(command: &str, payload: &T) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string(&Envelope {
        schema_version: SCHEMA_VERSION,
        command,
        payload,
    })?;
    text.push('\n');
    Ok(text)
}

/// Read a document written by [`to_json`] for `command`: the version and the command must match.
pub fn from_json<T: DeserializeOwned>(command: &str, text: &str) -> Result<T, String> {
    let mut value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let object = value
        .as_object_mut()
        .ok_or("the document is not a JSON object")?;
    match object.remove("schema_version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(SCHEMA_VERSION) => {}
        Some(v) => {
            return Err(format!(
                "schema_version {v}, this mldebug reads {SCHEMA_VERSION}"
            ))
        }
        None => return Err("no schema_version".to_string()),
    }
    match object.remove("command") {
        Some(serde_json::Value::String(c)) if c == command => {}
        Some(other) => return Err(format!("a `{other}` document, expected `{command}`")),
        None => return Err("no command".to_string()),
    }
    serde_json::from_value(value).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Body {
        a: u32,
        b: Vec<String>,
    }

    #[test]
    fn the_envelope_fields_come_first_and_the_payload_round_trips() {
        let body = Body {
            a: 7,
            b: vec!["x".into()],
        };
        let text = to_json("demo", &body).unwrap();
        assert!(
            text.starts_with("{\n  \"schema_version\": 3,\n  \"command\": \"demo\",\n  \"a\": 7")
        );
        assert!(text.ends_with("}\n"));
        assert_eq!(from_json::<Body>("demo", &text).unwrap(), body);
    }

    #[test]
    fn another_version_or_command_is_refused() {
        let text = to_json("demo", &Body { a: 1, b: vec![] }).unwrap();
        assert!(from_json::<Body>("check", &text)
            .unwrap_err()
            .contains("expected `check`"));
        let old = text.replace("\"schema_version\": 3", "\"schema_version\": 2");
        assert!(from_json::<Body>("demo", &old)
            .unwrap_err()
            .contains("schema_version 2"));
        assert!(from_json::<Body>("demo", "[1]").is_err());
    }
}
