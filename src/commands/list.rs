//! `mldebug list [entries|sources|checks|symptoms]`: what the catalog holds, one row each.

use crate::catalog::{self, Catalog};
use crate::context::Context;
use crate::render::output::{emit, emit_json};
use crate::render::{json, paint::Paint, table, text::warn_problems};
use crate::{Exit, Result};
use serde::Serialize;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to list.
    #[arg(value_enum, default_value_t = Kind::Entries)]
    pub kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Folklore entries and the sections of PLAYBOOK.md and refs/.
    Entries,
    /// The sources quoted (one evidence file each).
    Sources,
    /// The registered checks and their refs/ sections.
    Checks,
    /// The PLAYBOOK symptom rows.
    Symptoms,
}

#[derive(Serialize)]
struct EntryRow<'a> {
    id: &'a str,
    title: &'a str,
    section: Option<&'a str>,
    file: &'a str,
    line: usize,
    tags: &'a [String],
    quotes: usize,
    checks: Vec<String>,
}

#[derive(Serialize)]
struct SourceRow<'a> {
    id: &'a str,
    author: &'a str,
    title: &'a str,
    url: &'a str,
    date: &'a str,
    status: catalog::QuoteStatus,
    excerpts: usize,
}

#[derive(Serialize)]
struct CheckRow<'a> {
    id: String,
    section: Option<&'a str>,
    title: Option<&'a str>,
    command: &'a str,
}

#[derive(Serialize)]
struct SymptomRow<'a> {
    id: &'a str,
    symptom: &'a str,
    hypotheses: &'a [String],
    commands: &'a [String],
    file: &'a str,
    line: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum Rows<'a> {
    Entries(Vec<EntryRow<'a>>),
    Sources(Vec<SourceRow<'a>>),
    Checks(Vec<CheckRow<'a>>),
    Symptoms(Vec<SymptomRow<'a>>),
}

pub fn run(args: Args, g: &Context) -> Result<Exit> {
    let c = catalog::open(g)?;
    warn_problems(&c, g);
    let rows = rows(&c, args.kind);
    if g.json() {
        emit_json(&json::to_string("list", &rows)?)?;
    } else {
        let paint = Paint::new(g.stdout);
        emit(&human(&rows, paint), paint.color)?;
    }
    Ok(Exit::Ok)
}

fn rows(c: &Catalog, kind: Kind) -> Rows<'_> {
    match kind {
        Kind::Entries => Rows::Entries(
            c.entries
                .iter()
                .map(|e| EntryRow {
                    id: &e.id,
                    title: &e.title,
                    section: e.section.as_deref(),
                    file: &e.location.file,
                    line: e.location.line,
                    tags: &e.tags,
                    quotes: e.quotes.len(),
                    checks: e.checks.iter().map(|k| k.to_string()).collect(),
                })
                .collect(),
        ),
        Kind::Sources => Rows::Sources(
            c.sources
                .iter()
                .map(|s| SourceRow {
                    id: &s.id,
                    author: &s.author,
                    title: &s.title,
                    url: &s.url,
                    date: &s.date,
                    status: s.status,
                    excerpts: s.excerpts.len(),
                })
                .collect(),
        ),
        Kind::Checks => Rows::Checks(
            c.checks
                .iter()
                .map(|k| CheckRow {
                    id: k.id.to_string(),
                    section: k.section.as_deref(),
                    title: k.title.as_deref(),
                    command: &k.command,
                })
                .collect(),
        ),
        Kind::Symptoms => Rows::Symptoms(
            c.symptoms
                .iter()
                .map(|s| SymptomRow {
                    id: &s.id,
                    symptom: &s.symptom,
                    hypotheses: &s.hypotheses,
                    commands: &s.commands,
                    file: &s.location.file,
                    line: s.location.line,
                })
                .collect(),
        ),
    }
}

fn human(rows: &Rows<'_>, paint: Paint) -> String {
    let mut t;
    match rows {
        Rows::Entries(r) => {
            t = table::new(&["id", "title", "where", "checks"], paint);
            for e in r {
                table::add_row(
                    &mut t,
                    vec![
                        e.id.to_string(),
                        e.title.to_string(),
                        format!("{}:{}", e.file, e.line),
                        e.checks.join(" "),
                    ],
                );
            }
        }
        Rows::Sources(r) => {
            t = table::new(&["id", "author", "title", "status", "quotes"], paint);
            for s in r {
                table::add_row(
                    &mut t,
                    vec![
                        s.id.to_string(),
                        s.author.to_string(),
                        s.title.to_string(),
                        crate::render::paint::status_word(s.status).to_string(),
                        s.excerpts.to_string(),
                    ],
                );
            }
        }
        Rows::Checks(r) => {
            t = table::new(&["id", "section", "command"], paint);
            for k in r {
                table::add_row(
                    &mut t,
                    vec![
                        k.id.clone(),
                        k.title
                            .unwrap_or("(missing: run `mldebug catalog verify`)")
                            .to_string(),
                        k.command.to_string(),
                    ],
                );
            }
        }
        Rows::Symptoms(r) => {
            t = table::new(&["id", "symptom", "most likely", "first check"], paint);
            for s in r {
                table::add_row(
                    &mut t,
                    vec![
                        s.id.to_string(),
                        s.symptom.to_string(),
                        s.hypotheses.first().cloned().unwrap_or_default(),
                        s.commands.first().cloned().unwrap_or_default(),
                    ],
                );
            }
        }
    }
    table::to_string(&t)
}
