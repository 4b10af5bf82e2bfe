//! The one JSON envelope around everything mldebug writes as JSON: every command's `--json`
//! output and the report a harness hands back to the CLI.
//!
//! ```json
//! {"schema_version": 4, "command": "check", ...the command's own fields}
//! ```
//!
//! `schema_version` is one number for all of them: fields are only ever added within a version,
//! and anything else (a field renamed, removed or changing type) bumps it. `command` is the
//! subcommand that wrote the document, as typed (`check`, `sweep-compare`, ...). The fields of
//! each command are described by `schema/output.schema.json` in the repository, which a test
//! validates every command's output against.
//!
//! Every number that is not finite is the string `"NaN"`, `"inf"` or `"-inf"` in every document
//! ([`crate::finite_json`]), never `null`: `null` is only ever a value that is absent.
//!
//! Versions: 1 was the knowledge commands' documents; 2 the check report with non-finite numbers
//! as strings; 3 puts every document in this envelope (the `command` field, one version for
//! all, `zoo` as `{"models": [...]}`); 4 writes non-finite numbers as strings in every document
//! (`sweep-compare` and `doctor` wrote `null`).

use crate::finite_json::Finite;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// The version of every JSON document mldebug writes.
pub const SCHEMA_VERSION: u32 = 4;

/// `{"schema_version": ..., "command": ..., ...payload}`. The payload must serialize as a JSON
/// object (a struct or a map): its fields are written beside the two envelope fields.
#[derive(Debug, Serialize)]
pub struct Envelope<'a, T: Serialize> {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The subcommand that wrote the document.
    pub command: &'a str,
    /// The command's own fields.
    #[serde(flatten)]
    pub payload: &'a T,
}

/// The document as pretty-printed JSON, with a final newline.
pub fn to_json<T: Serialize>(command: &str, payload: &T) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string_pretty(&Finite(&Envelope {
        schema_version: SCHEMA_VERSION,
        command,
        payload,
    }))?;
    text.push('\n');
    Ok(text)
}

/// The document on one line, with a final newline: one event of a stream (`doctor --watch`).
pub fn to_json_line<T: Serialize>(command: &str, payload: &T) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string(&Finite(&Envelope {
        schema_version: SCHEMA_VERSION,
        command,
        payload,
    }))?;
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
        assert!(text.starts_with(&format!(
            "{{\n  \"schema_version\": {SCHEMA_VERSION},\n  \"command\": \"demo\",\n  \"a\": 7"
        )));
        assert!(text.ends_with("}\n"));
        assert_eq!(from_json::<Body>("demo", &text).unwrap(), body);
    }

    #[test]
    fn every_document_writes_a_non_finite_number_as_a_string_never_null() {
        #[derive(Serialize)]
        struct Stats {
            d: f64,
            ci: (f64, f64),
            absent: Option<f64>,
        }
        let stats = Stats {
            d: f64::NAN,
            ci: (f64::NEG_INFINITY, 0.5),
            absent: None,
        };
        for text in [
            to_json("sweep-compare", &stats).unwrap(),
            to_json_line("doctor", &stats).unwrap(),
        ] {
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["d"], "NaN", "{text}");
            assert_eq!(v["ci"][0], "-inf", "{text}");
            assert_eq!(v["ci"][1], 0.5, "{text}");
            assert!(v["absent"].is_null(), "{text}");
        }
    }

    #[test]
    fn another_version_or_command_is_refused() {
        let text = to_json("demo", &Body { a: 1, b: vec![] }).unwrap();
        assert!(from_json::<Body>("check", &text)
            .unwrap_err()
            .contains("expected `check`"));
        let old = text.replace(
            &format!("\"schema_version\": {SCHEMA_VERSION}"),
            "\"schema_version\": 2",
        );
        assert!(from_json::<Body>("demo", &old)
            .unwrap_err()
            .contains("schema_version 2"));
        assert!(from_json::<Body>("demo", "[1]").is_err());
    }
}
