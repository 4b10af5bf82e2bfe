//! `mldebug search <words>`: entries ranked by BM25F over title, body, quotes and tags (title
//! words count most), matching concepts as well as words (nan finds inf, 0 finds zero, a memory
//! leak finds memory growth and not data leakage); see `catalog::search`.

use crate::catalog::{self, search};
use crate::context::Context;
use crate::render::output::{emit, emit_json};
use crate::render::{json, paint::Paint, table, text::warn_problems};
use crate::{Error, Exit, Result};
use serde::Serialize;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Words to look for, e.g. `loss nan fp16`.
    #[arg(required = true, num_args = 1..)]
    pub words: Vec<String>,
    /// Show at most this many results.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
}

#[derive(Debug, Serialize)]
struct Hit<'a> {
    id: &'a str,
    title: &'a str,
    /// BM25 score, rounded to 2 decimals.
    score: f64,
    file: &'a str,
    line: usize,
    checks: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Output<'a> {
    query: String,
    results: Vec<Hit<'a>>,
}

pub fn run(args: Args, g: &Context) -> Result<Exit> {
    let c = catalog::open(g)?;
    warn_problems(&c, g);
    let query = args.words.join(" ");
    search::check_query_length(&query)?;
    let index = search::entry_index(&c);
    let results: Vec<Hit> = index
        .search(&query)
        .into_iter()
        .take(args.limit)
        .map(|(i, score)| {
            let e = &c.entries[i];
            Hit {
                id: &e.id,
                title: &e.title,
                score: (score * 100.0).round() / 100.0,
                file: &e.location.file,
                line: e.location.line,
                checks: e.checks.iter().map(|k| k.to_string()).collect(),
            }
        })
        .collect();
    if results.is_empty() {
        return Err(Error::usage(format!(
            "nothing in the catalog matches `{}`; try other words, or `mldebug list entries`",
            search::echo(&query)
        )));
    }
    let out = Output { query, results };
    if g.json() {
        emit_json(&json::to_string("search", &out)?)?;
    } else {
        let paint = Paint::new(g.stdout);
        let mut t = table::new(&["score", "id", "title", "where"], paint);
        for h in &out.results {
            t.add_row(vec![
                format!("{:.2}", h.score),
                h.id.to_string(),
                h.title.to_string(),
                format!("{}:{}", h.file, h.line),
            ]);
        }
        let mut text = table::to_string(&t);
        text.push_str(&paint.dim("details: mldebug show <id>"));
        text.push('\n');
        emit(&text, paint.color)?;
    }
    Ok(Exit::Ok)
}
