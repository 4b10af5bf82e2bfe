//! `--json` output: one pretty-printed JSON document on stdout, in the one envelope
//! (`schema_version`, `command`, then the command's fields; see [`mldebug_report::envelope`]).

use crate::{Error, Result};
use serde::Serialize;

pub use mldebug_report::envelope::SCHEMA_VERSION;

/// The document `command` writes for `body` (which must serialize as an object), with a final
/// newline.
pub fn to_string<T: Serialize>(command: &str, body: &T) -> Result<String> {
    mldebug_report::envelope::to_json(command, body)
        .map_err(|e| Error::internal(format!("writing JSON: {e}")))
}
