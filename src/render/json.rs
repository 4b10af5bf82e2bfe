//! `--json` output: one pretty-printed JSON document on stdout, with `schema_version`.

use crate::{Error, Result};
use serde::Serialize;

/// Version of the knowledge commands' JSON documents; fields are only ever added.
pub const SCHEMA_VERSION: u32 = 1;

/// A JSON document: `{"schema_version": 1, ...fields of body}`.
#[derive(Serialize)]
pub struct Document<'a, T: Serialize> {
    pub schema_version: u32,
    #[serde(flatten)]
    pub body: &'a T,
}

/// The document as text (with a final newline).
pub fn to_string<T: Serialize>(body: &T) -> Result<String> {
    let doc = Document {
        schema_version: SCHEMA_VERSION,
        body,
    };
    let mut s = serde_json::to_string_pretty(&doc)
        .map_err(|e| Error::internal(format!("writing JSON: {e}")))?;
    s.push('\n');
    Ok(s)
}
