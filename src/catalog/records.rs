//! The frozen quote records (a `quotes.yaml` list of `{id, quote, status, ...}`) that evidence
//! excerpts are copied from: every excerpt must equal its record's quote and status.

use super::evidence::line_of_id;
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
    let records: Vec<Record> = serde_norway::from_str(records_yaml)
        .map_err(|e| format!("the quote records do not parse: {e}"))?;
    let by_id: BTreeMap<&str, &Record> = records.iter().map(|r| (r.id.as_str(), r)).collect();
    let mut out = Vec::new();
    for s in &c.sources {
        let text = c
            .files
            .iter()
            .find(|(p, _)| *p == s.location.file)
            .map(|(_, t)| t.as_str())
            .unwrap_or("");
        for x in &s.excerpts {
            let location = Location {
                file: s.location.file.clone(),
                line: line_of_id(text, &x.id),
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
                    x.id
                )),
                Some(r) => {
                    if r.quote != x.text {
                        push(format!(
                            "excerpt `{}`: `text` differs from the record's `quote`",
                            x.id
                        ));
                    }
                    if r.status != x.status {
                        push(format!(
                            "excerpt `{}`: status {} but the record says {}",
                            x.id, x.status, r.status
                        ));
                    }
                }
            }
        }
    }
    Ok(out)
}
