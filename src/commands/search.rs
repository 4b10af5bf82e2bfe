//! `mldebug search <words>`: entries ranked by BM25F over title, body, quotes and tags (title
//! words count most), matching concepts as well as words (nan finds inf, 0 finds zero, a memory
//! leak finds memory growth and not data leakage); see `catalog::search`.

use crate::catalog::{self, search};
use crate::context::Context;
use crate::render::output::{emit, emit_json};
use crate::render::search::{self as render_search, Hit, Output};
use crate::render::{json, paint::Paint, text::warn_problems};
use crate::{Error, Exit, Result};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Words to look for, e.g. `loss nan fp16`.
    #[arg(required = true, num_args = 1..)]
    pub words: Vec<String>,
    /// Show at most this many results.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
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
        emit(&render_search::human(&out, paint), paint.color)?;
    }
    Ok(Exit::Ok)
}
