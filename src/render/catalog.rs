//! `mldebug catalog verify` for a person and for `--json`: every problem with its file and line,
//! then the verdict and what the catalog holds.

use super::paint::Paint;
use super::terminal::escape;
use serde::Serialize;

/// What the catalog holds.
#[derive(Debug, Serialize)]
pub struct Counts {
    pub entries: usize,
    pub quotes: usize,
    pub sources: usize,
    pub excerpts: usize,
    pub checks: usize,
    pub symptoms: usize,
}

/// The `--json` document's payload.
#[derive(Debug, Serialize)]
pub struct Output {
    pub ok: bool,
    pub counts: Counts,
    /// How many problems there are; `problems` lists at most 50 per file.
    pub problem_count: usize,
    pub problems: Vec<ProblemOut>,
}

/// One problem, at its file and line.
#[derive(Debug, Serialize)]
pub struct ProblemOut {
    pub file: String,
    pub line: usize,
    pub message: String,
}

/// The problems, one per line, then the verdict.
pub fn human(out: &Output, paint: Paint) -> String {
    let mut text = String::new();
    for p in &out.problems {
        text.push_str(&format!(
            "{}:{}: {}\n",
            escape(&p.file),
            p.line,
            escape(&p.message)
        ));
    }
    let n = &out.counts;
    let summary = format!(
        "{} entries, {} quotes from {} sources ({} excerpts), {} checks, {} symptoms",
        n.entries, n.quotes, n.sources, n.excerpts, n.checks, n.symptoms
    );
    if out.ok {
        text.push_str(&format!("{} {summary}\n", paint.green("catalog OK:")));
    } else {
        text.push_str(&format!(
            "{} {} problem(s) in {summary}\n",
            paint.red("catalog FAILED:"),
            out.problem_count
        ));
    }
    text
}
