//! `check --seeds` for a person: each seed's report as `check` prints it, then one table of how
//! each check came out over the seeds (which seeds passed, warned, failed, were skipped or
//! errored), and a line per check whose verdict changed with the seed.

use super::report::render;
use super::style::Style;
use super::terminal::escape;
use comfy_table::Cell;
use mldebug_diagnostics::Status;
use mldebug_report::SeedsReport;
use std::fmt::Write;

/// The statuses in the table's column order.
const COLUMNS: [Status; 5] = [
    Status::Pass,
    Status::Warn,
    Status::Fail,
    Status::Skipped,
    Status::Error,
];

/// The whole human report, ending in a newline.
pub fn render_seeds(doc: &SeedsReport, style: &Style) -> String {
    let mut out = String::new();
    for report in &doc.reports {
        out.push_str(&render(report, style));
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "{} · {} · over {} seeds: {}",
        escape(&doc.model),
        escape(&doc.device),
        doc.seeds.len(),
        seed_list(&doc.seeds)
    );
    let mut table = style.table();
    let mut header = vec!["check".to_string()];
    header.extend(COLUMNS.iter().map(|s| s.to_string()));
    table.set_header(header);
    for v in &doc.verdicts {
        let mut row = vec![Cell::new(v.check)];
        for status in COLUMNS {
            let seeds = v.seeds(status);
            row.push(if seeds.is_empty() {
                Cell::new("")
            } else {
                style.status_cell(status, format!("{} ({})", seeds.len(), seed_list(seeds)))
            });
        }
        table.add_row(row);
    }
    let _ = writeln!(out, "{table}");
    let mixed: Vec<String> = doc
        .verdicts
        .iter()
        .filter(|v| COLUMNS.iter().filter(|&&s| !v.seeds(s).is_empty()).count() > 1)
        .map(|v| v.check.to_string())
        .collect();
    if mixed.is_empty() {
        let _ = writeln!(out, "Every check gave the same verdict on every seed.");
    } else {
        let _ = writeln!(
            out,
            "The verdict changed with the seed for: {}. Read the seeds' reports above: a bug that \
             shows on some seeds only is still a bug, and a pass on one seed is not a pass.",
            mixed.join(", ")
        );
    }
    out
}

/// `0-4, 7, 9-10`: the seeds sorted, runs of consecutive ones as ranges.
pub fn seed_list(seeds: &[u64]) -> String {
    let mut sorted = seeds.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use mldebug_diagnostics::{CheckId, Finding, Report};

    fn report(seed: u64, grad_flow: Status) -> Report {
        Report {
            model: "zoo::mlp".into(),
            device: "cpu".into(),
            seed,
            checks: vec![
                Finding::new(CheckId::InitLoss, Status::Pass, "fine"),
                Finding::new(CheckId::GradFlow, grad_flow, "no gradient in 0.weight"),
            ],
        }
    }

    #[test]
    fn seed_lists_read_as_ranges() {
        assert_eq!(seed_list(&[]), "");
        assert_eq!(seed_list(&[3]), "3");
        assert_eq!(seed_list(&[4, 0, 1, 2, 3, 7, 9, 10]), "0-4, 7, 9-10");
    }

    #[test]
    fn every_seed_is_reported_then_the_verdicts_over_the_seeds() {
        let style = Style::plain();
        let doc = SeedsReport::new(vec![
            report(0, Status::Fail),
            report(1, Status::Pass),
            report(2, Status::Fail),
        ]);
        let text = render_seeds(&doc, &style);
        for seed in 0..3 {
            assert!(
                text.contains(&format!("zoo::mlp · cpu · seed {seed}")),
                "{text}"
            );
        }
        assert!(text.contains("over 3 seeds: 0-2"), "{text}");
        let row = text
            .lines()
            .find(|l| l.contains("grad-flow") && l.contains("(0, 2)"))
            .unwrap_or_else(|| panic!("no grad-flow row over the seeds:\n{text}"));
        assert!(row.contains("1 (1)") && row.contains("2 (0, 2)"), "{row}");
        assert!(
            text.contains("The verdict changed with the seed for: grad-flow."),
            "{text}"
        );
    }

    #[test]
    fn the_same_verdict_everywhere_is_said_so() {
        let doc = SeedsReport::new(vec![report(5, Status::Pass), report(6, Status::Pass)]);
        let text = render_seeds(&doc, &Style::plain());
        assert!(text.contains("over 2 seeds: 5-6"), "{text}");
        assert!(text.contains("Every check gave the same verdict on every seed."));
    }
}
