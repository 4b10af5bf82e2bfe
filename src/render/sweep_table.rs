//! `sweep-compare` as terminal text: comfy-table tables, the verdict and warnings; colour (ANSI)
//! only on the verdict and warning labels, and only when asked for. Every piece of the report
//! may hold data (run names, labels, metric names), so each is escaped before it is placed.

use super::sweep_report::{build, Block};
use crate::sweep::compare::Comparison;
use crate::sweep::verdict::VerdictKind;
use comfy_table::{presets, Table};

/// One line of data-bearing text, escaped ([`super::terminal::escape`]): run names, group
/// labels and metric names reach every part of the report.
fn esc(text: &str) -> String {
    super::terminal::escape(text).into_owned()
}

fn table(b: &Block) -> String {
    let mut t = Table::new();
    t.load_style(presets::UTF8_BORDERS_ONLY)
        .force_no_tty()
        .set_header(b.header.iter().map(|h| esc(h)));
    for r in &b.rows {
        t.add_row(r.iter().map(|c| esc(c)));
    }
    t.to_string()
}

fn paint(text: &str, code: &str, color: bool) -> String {
    super::paint::sgr(color, code, text)
}

/// The whole report as text; `color` adds ANSI colour to the verdict and warnings.
pub fn render(c: &Comparison, color: bool) -> String {
    let r = build(c);
    let mut out = String::new();
    for l in &r.lines {
        out.push_str(&esc(l));
        out.push('\n');
    }
    for b in &r.blocks {
        out.push('\n');
        out.push_str(&esc(&b.title));
        out.push('\n');
        out.push_str(&table(b));
        out.push('\n');
    }
    for n in &r.notes {
        out.push_str(&format!("note: {}\n", esc(n)));
    }
    let code = match r.verdict_kind {
        VerdictKind::ABetter | VerdictKind::BBetter => "1;32",
        VerdictKind::ALikelyBetter | VerdictKind::BLikelyBetter => "1;33",
        VerdictKind::Refused => "1;31",
        VerdictKind::Inconclusive | VerdictKind::NoMeaningfulDifference => "1",
    };
    out.push('\n');
    out.push_str(&format!(
        "{} — {}\n",
        paint(
            &format!("VERDICT: {}", esc(&r.verdict_headline)),
            code,
            color
        ),
        esc(&r.verdict_reason)
    ));
    for w in &r.warnings {
        out.push_str(&format!("{} {}\n", paint("warning:", "33", color), esc(w)));
    }
    out
}
