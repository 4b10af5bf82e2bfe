//! The frozen quote records (a `quotes.yaml` list of `{id, quote, status, ...}`) that evidence
//! excerpts are copied from: every excerpt must equal its record's quote and status.

use super::evidence::id_lines;
use super::limits::shown;
use super::model::{Catalog, Location, Problem};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
struct Record {
    id: String,
    quote: String,
    status: super::model::QuoteStatus,
}

/// Compare every evidence excerpt with the record of the same id in `records_yaml`.
/// `Err` when the records file itself does not parse.
pub fn compare(c: &Catalog, records_yaml: &str) -> Result<Vec<Problem>, String> {
    crate::yaml_depth::check(records_yaml.as_bytes())
        .map_err(|deep| format!("the quote records do not parse: {deep}"))?;
    let records: Vec<Record> = serde_norway::from_str(records_yaml)
        .map_err(|e| format!("the quote records do not parse: {e}"))?;
    let by_id: BTreeMap<&str, &Record> = records.iter().map(|r| (r.id.as_str(), r)).collect();
    let texts: BTreeMap<&str, &str> = c
        .files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let mut out = Vec::new();
    for s in &c.sources {
        let text = texts.get(s.location.file.as_str()).copied().unwrap_or("");
        let lines = id_lines(text);
        for x in &s.excerpts {
            let location = Location {
                file: s.location.file.clone(),
                line: lines.get(x.id.as_str()).copied().unwrap_or(1),
            };
            let mut push = |message: String| {
                out.push(Problem {
                    location: location.clone(),
                    message,
                })
            };
            match by_id.get(x.id.as_str()) {
                None => push(format!(
                    "excerpt `{}` has no record in the quote records",
                    shown(&x.id)
                )),
                Some(r) => {
                    if r.quote != x.text {
                        push(format!(
                            "excerpt `{}`: `text` differs from the record's `quote`",
                            shown(&x.id)
                        ));
                    }
                    if r.status != x.status {
                        push(format!(
                            "excerpt `{}`: status {} but the record says {}",
                            shown(&x.id),
                            x.status,
                            r.status
                        ));
                    }
                }
            }
        }
    }
    Ok(out)
}
