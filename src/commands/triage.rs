//! `mldebug triage "<symptom in plain words>"`: the PLAYBOOK symptom rows that match, ranked
//! (BM25F over normalised words and concepts, typos tolerated; see `catalog::search`), each with
//! its id, its hypotheses in order and the commands that tell them apart.

use crate::catalog::{self, search};
use crate::context::Context;
use crate::render::output::{emit, emit_json};
use crate::render::{
    json,
    paint::Paint,
    text::{warn_problems, wrap, WRAP},
};
use crate::{Error, Exit, Result};
use serde::Serialize;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The symptom, in plain words: "loss is exactly 0", "loss goes nan after a few steps".
    #[arg(required = true, num_args = 1..)]
    pub symptom: Vec<String>,
    /// Show at most this many matching rows.
    #[arg(long, default_value_t = 3)]
    pub limit: usize,
}

#[derive(Debug, Serialize)]
struct Row<'a> {
    /// The row's stable id in the PLAYBOOK symptoms table.
    id: &'a str,
    symptom: &'a str,
    /// BM25 score, rounded to 2 decimals.
    score: f64,
    hypotheses: &'a [String],
    commands: &'a [String],
    checks: Vec<String>,
    /// Catalog entries that explain this symptom (`mldebug show <id>`), best first.
    read: Vec<&'a str>,
    file: &'a str,
    line: usize,
}

/// How many explaining entries to offer per symptom row.
const READ_MAX: usize = 3;

#[derive(Debug, Serialize)]
struct Output<'a> {
    query: String,
    matches: Vec<Row<'a>>,
}

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
                .filter(|id| !s.commands.contains(&format!("mldebug show {id}")))
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
        emit(&human(&out, paint), paint.color)?;
    }
    Ok(Exit::Ok)
}

fn human(out: &Output<'_>, paint: Paint) -> String {
    let mut s = String::new();
    for (n, row) in out.matches.iter().enumerate() {
        if n > 0 {
            s.push('\n');
        }
        s.push_str(&format!(
            "{} {}\n",
            paint.bold(&format!("{}.", n + 1)),
            paint.bold(row.symptom)
        ));
        s.push_str(&paint.dim(&format!(
            "   {} · {}:{} · score {:.2}",
            row.id, row.file, row.line, row.score
        )));
        s.push('\n');
        s.push_str("   Hypotheses, most likely first:\n");
        for (i, h) in row.hypotheses.iter().enumerate() {
            let text = wrap(h, WRAP, "        ");
            s.push_str(&format!("     {}. {}", i + 1, text.trim_start()));
        }
        s.push_str("   Tell them apart:\n");
        for cmd in row.commands {
            s.push_str(&format!("     {}\n", paint.cyan(cmd)));
        }
        if !row.read.is_empty() {
            s.push_str("   Read:\n");
            for id in &row.read {
                s.push_str(&format!("     mldebug show {id}\n"));
            }
        }
    }
    s
}
