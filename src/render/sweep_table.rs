//! `sweep-compare` as terminal text: comfy-table tables, the verdict and warnings; colour (ANSI)
//! only on the verdict and warning labels, and only when asked for.

use super::sweep_report::{build, Block};
use crate::sweep::compare::Comparison;
use crate::sweep::verdict::VerdictKind;
use comfy_table::{presets, Table};

fn table(b: &Block) -> String {
    let mut t = Table::new();
    t.load_style(presets::UTF8_BORDERS_ONLY)
        .force_no_tty()
        .set_header(b.header.clone());
    for r in &b.rows {
        t.add_row(r.clone());
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
        out.push_str(l);
        out.push('\n');
    }
    for b in &r.blocks {
        out.push('\n');
        out.push_str(&b.title);
        out.push('\n');
        out.push_str(&table(b));
        out.push('\n');
    }
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
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
        paint(&format!("VERDICT: {}", r.verdict_headline), code, color),
        r.verdict_reason
    ));
    for w in &r.warnings {
        out.push_str(&format!("{} {w}\n", paint("warning:", "33", color)));
    }
    out
}
