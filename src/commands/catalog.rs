//! `mldebug catalog verify`: check the catalog (embedded, or `--catalog DIR`) against the Markdown
//! conventions and its evidence; every problem is printed with its file and line; exit 1 if any.

use crate::catalog::{self, limits, records, verify, Problem};
use crate::context::Context;
use crate::render::catalog::{self as render_catalog, Counts, Output, ProblemOut};
use crate::render::output::{emit, emit_json};
use crate::render::{json, paint::Paint};
use crate::{Error, Exit, Result};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Footnotes resolve, quotes match their evidence exactly, `*(unverified)*` markers are
    /// right, check ids exist and have refs/ sections, SKILL.md follows the agent-skill spec.
    Verify(VerifyArgs),
}

#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// Also compare every evidence excerpt with its record in this quote-records YAML file
    /// (a list of `{id, quote, status, ...}`).
    #[arg(long, value_name = "FILE")]
    pub records: Option<PathBuf>,
}

pub fn run(args: Args, g: &Context) -> Result<Exit> {
    match args.action {
        Action::Verify(v) => verify_cmd(v, g),
    }
}

fn verify_cmd(args: VerifyArgs, g: &Context) -> Result<Exit> {
    let c = catalog::open(g)?;
    let mut problems: Vec<Problem> = verify::all(&c);
    if let Some(path) = &args.records {
        let text = std::fs::read_to_string(path).map_err(|e| Error::input(path, "reading", e))?;
        let more = records::compare(&c, &text).map_err(|e| Error::input(path, "parsing", e))?;
        problems.extend(more);
    }
    problems.sort();
    problems.dedup();
    let total = problems.len();
    let problems = limits::bound(problems);
    // With --catalog, name files by their path on disk so a person can open them.
    let prefix = g
        .catalog
        .as_ref()
        .map(|d| format!("{}/", d.display().to_string().trim_end_matches('/')))
        .unwrap_or_default();
    let out = Output {
        ok: problems.is_empty(),
        problem_count: total,
        counts: Counts {
            entries: c.entries.len(),
            quotes: c.quotes.len(),
            sources: c.sources.len(),
            excerpts: c.sources.iter().map(|s| s.excerpts.len()).sum(),
            checks: c.checks.len(),
            symptoms: c.symptoms.len(),
        },
        problems: problems
            .iter()
            .map(|p| ProblemOut {
                file: format!("{prefix}{}", p.location.file),
                line: p.location.line,
                message: p.message.clone(),
            })
            .collect(),
    };
    if g.json() {
        emit_json(&json::to_string("catalog", &out)?)?;
    } else {
        let paint = Paint::new(g.stdout);
        emit(&render_catalog::human(&out, paint), paint.color)?;
    }
    Ok(if out.ok { Exit::Ok } else { Exit::Failed })
}
