//! A check [`Report`] for a person: one table row per check (status, summary, key numbers, the
//! overfit curve as a sparkline), then the details of every finding that is not a pass, each with
//! the catalog entry that explains it and the command to run next.

use super::sparkline::{sparkline, ROW_WIDTH};
use super::style::Style;
use super::terminal::escape;
use comfy_table::{Cell, Table};
use mldebug_diagnostics::report::Series;
use mldebug_diagnostics::{CheckId, Finding, Report, Status};
use mldebug_text::number::sig;
use std::fmt::Write;

/// Detail lines shown per finding: enough for every parameter of a small model or the frames
/// before a NaN, while a long backtrace in an error does not bury the rest of the report.
const MAX_DETAIL_LINES: usize = 20;

/// The series a check's row draws as a sparkline, when it has one.
const SPARKLINE_SERIES: &[(CheckId, &str)] = &[(CheckId::Overfit, "loss")];

/// The whole human report, ending in a newline.
pub fn render(report: &Report, style: &Style) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} · {} · seed {}",
        escape(&report.model),
        escape(&report.device),
        report.seed
    );
    let _ = writeln!(out, "{}", table(report, style).trim_fmt());
    for finding in report.checks.iter().filter(|f| f.status != Status::Pass) {
        out.push('\n');
        out.push_str(&details(finding, style));
    }
    out.push('\n');
    let _ = writeln!(out, "{}", tally(report, style));
    out
}

fn table(report: &Report, style: &Style) -> Table {
    let mut table = style.table();
    table.set_header(["check", "status", "summary", "numbers"]);
    for f in &report.checks {
        table.add_row(vec![
            Cell::new(f.check),
            style.status_cell(f.status, f.status),
            Cell::new(summary_with_curve(f)),
            Cell::new(escape(&key_metrics_line(f))),
        ]);
    }
    table
}

/// The summary, with the row's sparkline after it when the check has a curve.
fn summary_with_curve(f: &Finding) -> String {
    match row_curve(f) {
        Some(series) => {
            let ys: Vec<f64> = series.points.iter().map(|p| p[1]).collect();
            format!("{}\n{}", escape(&f.summary), sparkline(&ys, ROW_WIDTH))
        }
        None => escape(&f.summary).into_owned(),
    }
}

fn row_curve(f: &Finding) -> Option<&Series> {
    let (_, name) = SPARKLINE_SERIES.iter().find(|(c, _)| *c == f.check)?;
    f.series
        .iter()
        .find(|s| s.name == *name && !s.points.is_empty())
}

/// The numbers a row shows for each check, in this order; the details block and `--json` have
/// them all. A check with none of these names shows its first [`ROW_METRICS_FALLBACK`].
const KEY_METRICS: &[(CheckId, &[&str])] = &[
    (CheckId::InitLoss, &["loss", "expected", "ratio"]),
    (CheckId::ClassBalance, &["ratio", "classes_seen"]),
    (CheckId::LabelMask, &["masked_share", "loss_all_masked"]),
    (
        CheckId::GradFlow,
        &[
            "params_without_grad",
            "params_zero_grad",
            "params_non_finite_grad",
            "first_last_ratio",
        ],
    ),
    (CheckId::NanTrace, &["max_abs", "steps"]),
    (CheckId::BatchLeak, &["cross_sample_change", "own_change"]),
    (CheckId::Overfit, &["loss_start", "loss_end", "steps"]),
    (
        CheckId::Memory,
        &[
            "peak_bytes",
            "growth_per_step_bytes",
            "largest_allocation_ratio",
        ],
    ),
];
const ROW_METRICS_FALLBACK: usize = 3;

/// The row's key numbers as `name value` pairs, three significant digits.
pub fn key_metrics_line(f: &Finding) -> String {
    let keys = KEY_METRICS
        .iter()
        .find(|(c, _)| *c == f.check)
        .map_or(&[][..], |(_, keys)| *keys);
    let chosen: Vec<(&String, &f64)> = keys
        .iter()
        .filter_map(|k| f.metrics.get_key_value(*k))
        .collect();
    let chosen = if chosen.is_empty() {
        f.metrics.iter().take(ROW_METRICS_FALLBACK).collect()
    } else {
        chosen
    };
    join_metrics(chosen)
}

/// Every metric as `name value` pairs, three significant digits.
pub fn metrics_line(f: &Finding) -> String {
    join_metrics(f.metrics.iter().collect())
}

fn join_metrics(metrics: Vec<(&String, &f64)>) -> String {
    metrics
        .into_iter()
        .map(|(k, v)| format!("{k} {}", sig(*v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The block printed under the table for a finding that is not a pass.
fn details(f: &Finding, style: &Style) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {}: {}",
        style.paint(f.status, f.status.as_str()),
        f.check,
        escape(&f.summary)
    );
    if !f.metrics.is_empty() {
        let _ = writeln!(out, "    numbers: {}", escape(&metrics_line(f)));
    }
    for line in f.details.iter().take(MAX_DETAIL_LINES) {
        let _ = writeln!(out, "    {}", escape(line));
    }
    if f.details.len() > MAX_DETAIL_LINES {
        let more = f.details.len() - MAX_DETAIL_LINES;
        let _ = writeln!(out, "    … {more} more lines (--json has them all)");
    }
    let see = mldebug_report::show_command(&f.entry);
    if !f.entry.is_empty() {
        let _ = writeln!(out, "    see:  {}", escape(&see));
    }
    // A check with nothing better to suggest names its catalog entry again; once is enough.
    if !f.next.is_empty() && f.next != see {
        let _ = writeln!(out, "    next: {}", escape(&f.next));
    }
    out
}

/// `7 checks: 5 pass, 1 warn, 1 fail`, statuses in a fixed order, zero counts left out.
fn tally(report: &Report, style: &Style) -> String {
    let order = [
        Status::Pass,
        Status::Warn,
        Status::Skipped,
        Status::Fail,
        Status::Error,
    ];
    let parts: Vec<String> = order
        .iter()
        .filter_map(|&s| {
            let n = report.checks.iter().filter(|f| f.status == s).count();
            (n > 0).then(|| style.paint(s, &format!("{n} {s}")))
        })
        .collect();
    let n = report.checks.len();
    let noun = if n == 1 { "check" } else { "checks" };
    format!("{n} {noun}: {}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(checks: Vec<Finding>) -> Report {
        Report {
            model: "zoo::mlp".into(),
            device: "cpu".into(),
            seed: 0,
            checks,
        }
    }

    fn overfit_pass() -> Finding {
        let mut f = Finding::new(
            CheckId::Overfit,
            Status::Pass,
            "loss fell to 1% of its start",
        )
        .metric("loss_end", 0.023_456)
        .metric("loss_start", 2.299_1)
        .metric("learning_rate", 0.003);
        f.series.push(Series {
            name: "loss".into(),
            x_label: "step".into(),
            y_label: "loss".into(),
            points: (0..8).map(|i| [i as f64, 8.0 - i as f64]).collect(),
            labels: vec![],
        });
        f
    }

    fn grad_flow_fail() -> Finding {
        let mut f = Finding::new(
            CheckId::GradFlow,
            Status::Fail,
            "1 of 4 parameters gets no gradient",
        )
        .metric("no_grad", 1.0)
        .next("mldebug check grad-flow --model zoo::mlp --plot plots");
        f.details
            .push("fc1.weight: no gradient (not in the loss graph)".into());
        f
    }

    #[test]
    fn a_passing_row_has_no_details_block() {
        let text = render(&report(vec![overfit_pass()]), &Style::plain());
        assert!(text.starts_with("zoo::mlp · cpu · seed 0\n"), "{text}");
        assert!(text.contains("█▇▆▅▄▃▂▁"), "sparkline missing:\n{text}");
        assert!(text.contains("loss_start 2.30, loss_end 0.0235"), "{text}");
        assert!(!text.contains("see:"), "{text}");
        assert!(text.ends_with("1 check: 1 pass\n"), "{text}");
    }

    #[test]
    fn a_failing_finding_gets_its_details_entry_and_next_command() {
        let text = render(
            &report(vec![overfit_pass(), grad_flow_fail()]),
            &Style::plain(),
        );
        let block = text.split_once("fail grad-flow:").expect("details block").1;
        assert!(block.contains("    fc1.weight: no gradient"), "{text}");
        assert!(
            block.contains("    see:  mldebug show check-grad-flow"),
            "{text}"
        );
        assert!(
            block.contains("    next: mldebug check grad-flow --model zoo::mlp --plot plots"),
            "{text}"
        );
        assert!(text.ends_with("2 checks: 1 pass, 1 fail\n"), "{text}");
    }

    #[test]
    fn long_details_are_cut_with_a_pointer_to_json() {
        let mut f = Finding::new(
            CheckId::InitLoss,
            Status::Error,
            "the model returned an error",
        );
        f.details = (0..50).map(|i| format!("frame {i}")).collect();
        let text = render(&report(vec![f]), &Style::plain());
        assert!(text.contains("    frame 19\n"), "{text}");
        assert!(!text.contains("frame 20"), "{text}");
        assert!(
            text.contains("    … 30 more lines (--json has them all)"),
            "{text}"
        );
    }

    #[test]
    fn a_next_command_equal_to_the_entry_is_not_repeated() {
        let f = Finding::new(CheckId::BatchLeak, Status::Skipped, "cannot judge")
            .next("mldebug show check-batch-leak");
        let text = render(&report(vec![f]), &Style::plain());
        assert!(
            text.contains("see:  mldebug show check-batch-leak"),
            "{text}"
        );
        assert!(!text.contains("next:"), "{text}");
    }

    #[test]
    fn plain_output_has_no_escape_codes_and_colour_output_has_them() {
        let r = report(vec![grad_flow_fail()]);
        assert!(!render(&r, &Style::plain()).contains('\x1b'));
        let colour = Style {
            colour: true,
            terminal: false,
        };
        assert!(render(&r, &colour).contains("\x1b[31m"));
    }

    #[test]
    fn non_finite_metrics_are_words() {
        let f = Finding::new(CheckId::NanTrace, Status::Fail, "NaN in fc2")
            .metric("max_abs", f64::NAN)
            .metric("zeta", 1.0);
        assert_eq!(key_metrics_line(&f), "max_abs NaN");
        assert_eq!(metrics_line(&f), "max_abs NaN, zeta 1");
    }

    #[test]
    fn a_check_without_its_key_metrics_shows_its_first_ones() {
        let f = Finding::new(CheckId::Overfit, Status::Pass, "")
            .metric("a", 1.0)
            .metric("b", 2.0)
            .metric("c", 3.0)
            .metric("d", 4.0);
        assert_eq!(key_metrics_line(&f), "a 1, b 2, c 3");
    }
}
