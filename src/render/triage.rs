//! `mldebug triage` for a person and for `--json`: the matching PLAYBOOK symptom rows.

use super::paint::Paint;
use super::terminal::{escape, escape_text};
use super::text::{wrap, WRAP};
use mldebug_report::show_command;
use serde::Serialize;

/// One matching symptom row.
#[derive(Debug, Serialize)]
pub struct Row<'a> {
    /// The row's stable id in the PLAYBOOK symptoms table.
    pub id: &'a str,
    pub symptom: &'a str,
    /// BM25 score, rounded to 2 decimals.
    pub score: f64,
    pub hypotheses: &'a [String],
    pub commands: &'a [String],
    pub checks: Vec<String>,
    /// Catalog entries that explain this symptom (`mldebug show <id>`), best first.
    pub read: Vec<&'a str>,
    pub file: &'a str,
    pub line: usize,
}

/// The `--json` document's payload.
#[derive(Debug, Serialize)]
pub struct Output<'a> {
    pub query: String,
    pub matches: Vec<Row<'a>>,
}

/// The matches for a person: each row with its hypotheses, the commands that tell them apart
/// and what to read.
pub fn human(out: &Output<'_>, paint: Paint) -> String {
    let mut s = String::new();
    for (n, row) in out.matches.iter().enumerate() {
        if n > 0 {
            s.push('\n');
        }
        s.push_str(&format!(
            "{} {}\n",
            paint.bold(&format!("{}.", n + 1)),
            paint.bold(&escape(row.symptom))
        ));
        s.push_str(&paint.dim(&format!(
            "   {} · {}:{} · score {:.2}",
            escape(row.id),
            escape(row.file),
            row.line,
            row.score
        )));
        s.push('\n');
        s.push_str("   Hypotheses, most likely first:\n");
        for (i, h) in row.hypotheses.iter().enumerate() {
            let text = wrap(&escape_text(h), WRAP, "        ");
            s.push_str(&format!("     {}. {}", i + 1, text.trim_start()));
        }
        s.push_str("   Tell them apart:\n");
        for cmd in row.commands {
            s.push_str(&format!("     {}\n", paint.cyan(&escape(cmd))));
        }
        if !row.read.is_empty() {
            s.push_str("   Read:\n");
            for id in &row.read {
                s.push_str(&format!("     {}\n", escape(&show_command(id))));
            }
        }
    }
    s
}
