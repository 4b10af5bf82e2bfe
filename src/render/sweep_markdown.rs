//! `sweep-compare` as Markdown (for PR comments and notebooks): the same blocks as the terminal
//! table, as pipe tables.

use super::sweep_report::{build, Block};
use crate::sweep::compare::Comparison;

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

fn table(b: &Block) -> String {
    let mut out = String::new();
    let header: Vec<String> = b
        .header
        .iter()
        .map(|h| if h.is_empty() { " ".into() } else { cell(h) })
        .collect();
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    out.push_str(&format!("|{}\n", "---|".repeat(header.len())));
    for r in &b.rows {
        let row: Vec<String> = r.iter().map(|c| cell(c)).collect();
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out
}

/// The whole report as Markdown.
pub fn render(c: &Comparison) -> String {
    let r = build(c);
    let mut out = String::from("## sweep-compare\n\n");
    for l in &r.lines {
        out.push_str(&format!("- {}\n", cell(l)));
    }
    for b in &r.blocks {
        out.push_str(&format!("\n**{}**\n\n", b.title));
        out.push_str(&table(b));
    }
    if !r.notes.is_empty() {
        out.push('\n');
        for n in &r.notes {
            out.push_str(&format!("_Note: {n}_\n"));
        }
    }
    out.push_str(&format!(
        "\n**VERDICT: {}** — {}\n",
        r.verdict_headline, r.verdict_reason
    ));
    if !r.warnings.is_empty() {
        out.push('\n');
        for w in &r.warnings {
            out.push_str(&format!("> ⚠ {w}\n"));
        }
    }
    out
}
