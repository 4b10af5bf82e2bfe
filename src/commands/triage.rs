//! `mldebug triage "<symptom in plain words>"`: the PLAYBOOK symptom rows that match, ranked
//! (BM25F over normalised words and concepts, typos tolerated; see `catalog::search`), each with
//! its id, its hypotheses in order and the commands that tell them apart.

use crate::catalog::{self, search};
use crate::context::Context;
use crate::render::output::{emit, emit_json};
use crate::render::triage::{self as render_triage, Output, Row};
use crate::render::{json, paint::Paint, text::warn_problems};
use crate::{Error, Exit, Result};
use mldebug_report::show_command;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The symptom, in plain words: "loss is exactly 0", "loss goes nan after a few steps".
    #[arg(required = true, num_args = 1..)]
    pub symptom: Vec<String>,
    /// Show at most this many matching rows.
    #[arg(long, default_value_t = 3)]
    pub limit: usize,
}

/// How many explaining entries to offer per symptom row.
const READ_MAX: usize = 3;

pub fn run(args: Args, g: &Context) -> Result<Exit> {
    let c = catalog::open(g)?;
    warn_problems(&c, g);
    let query = args.symptom.join(" ");
    search::check_query_length(&query)?;
    let entries = search::entry_index(&c);
    let matches: Vec<Row> = search::symptom_index(&c)
        .search(&query)
        .into_iter()
        .take(args.limit)
        .map(|(i, score)| {
            let s = &c.symptoms[i];
            let read = entries
                .search(&format!("{} {}", s.symptom, s.hypotheses.join(" ")))
                .into_iter()
                .map(|(e, _)| c.entries[e].id.as_str())
                .filter(|id| *id != catalog::markdown::SYMPTOMS_ID)
                // An entry the row already tells you to show is not repeated.
                .filter(|id| !s.commands.contains(&show_command(id)))
                .take(READ_MAX)
                .collect();
            Row {
                read,
                id: &s.id,
                symptom: &s.symptom,
                score: (score * 100.0).round() / 100.0,
                hypotheses: &s.hypotheses,
                commands: &s.commands,
                checks: s.checks.iter().map(|k| k.to_string()).collect(),
                file: &s.location.file,
                line: s.location.line,
            }
        })
        .collect();
    if matches.is_empty() {
        return Err(Error::usage(format!(
            "no symptom in the playbook matches `{q}`; `mldebug list symptoms` shows them all, `mldebug search {q}` looks wider",
            q = search::echo(&query)
        )));
    }
    let out = Output { query, matches };
    if g.json() {
        emit_json(&json::to_string("triage", &out)?)?;
    } else {
        let paint = Paint::new(g.stdout);
        emit(&render_triage::human(&out, paint), paint.color)?;
    }
    Ok(Exit::Ok)
}
