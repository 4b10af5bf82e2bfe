//! `mldebug search` for a person and for `--json`: the entries found, ranked.

use super::{paint::Paint, table};
use serde::Serialize;

/// One entry found.
#[derive(Debug, Serialize)]
pub struct Hit<'a> {
    pub id: &'a str,
    pub title: &'a str,
    /// BM25 score, rounded to 2 decimals.
    pub score: f64,
    pub file: &'a str,
    pub line: usize,
    pub checks: Vec<String>,
}

/// The `--json` document's payload.
#[derive(Debug, Serialize)]
pub struct Output<'a> {
    pub query: String,
    pub results: Vec<Hit<'a>>,
}

/// The results as a table, with where to read more.
pub fn human(out: &Output<'_>, paint: Paint) -> String {
    let mut t = table::new(&["score", "id", "title", "where"], paint);
    for h in &out.results {
        table::add_row(
            &mut t,
            [
                format!("{:.2}", h.score),
                h.id.to_string(),
                h.title.to_string(),
                format!("{}:{}", h.file, h.line),
            ],
        );
    }
    let mut text = table::to_string(&t);
    text.push_str(&paint.dim("details: mldebug show <id>"));
    text.push('\n');
    text
}
