//! The `mldebug demo` matrix: one row per zoo model, one column per check. A cell shows the
//! verdict and whether it is the one a correct mldebug must give; a wrong one also says what
//! was expected. Below: what went wrong, and "N of M expected verdicts matched".

use super::style::Style;
use comfy_table::{Cell, CellAlignment, Table};
use mldebug_diagnostics::Status;
use mldebug_judge::matrix::{DemoMatrix, MatrixCell};
use std::fmt::Write;

const MATCHED: &str = "✓";
const MISMATCHED: &str = "✗";

pub fn render(m: &DemoMatrix, style: &Style) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Every check on every zoo model ({} · seed {}).",
        m.device, m.seed
    );
    let _ = writeln!(
        out,
        "{MATCHED} the verdict a correct mldebug must give: fail on a twin's bug, no fail on a clean \
         model.\n{MISMATCHED} a different verdict. No mark: any verdict will do."
    );
    let _ = writeln!(out, "{}", table(m, style).trim_fmt());
    let wrong: Vec<(&str, &MatrixCell)> = m
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().map(move |c| (r.model.as_str(), c)))
        .filter(|(_, c)| c.matched == Some(false) || c.actual == Status::Error)
        .collect();
    if !wrong.is_empty() {
        out.push('\n');
        for (model, c) in wrong {
            let want = c.expected.map_or("no error".to_string(), |e| {
                format!("expected {}", e.as_str())
            });
            let _ = writeln!(
                out,
                "{MISMATCHED} {model} · {}: {} ({want}): {}",
                c.check, c.actual, c.summary
            );
            let _ = writeln!(out, "    {}", c.check.command(&format!("zoo::{model}")));
        }
    }
    out.push('\n');
    let tally = format!("{} of {} expected verdicts matched", m.matched, m.expected);
    let status = if m.all_matched() {
        Status::Pass
    } else {
        Status::Fail
    };
    let _ = write!(out, "{}", style.paint(status, &tally));
    if m.errors > 0 {
        let noun = if m.errors == 1 { "check" } else { "checks" };
        let _ = write!(out, "; {} {noun} could not run", m.errors);
    }
    out.push('\n');
    out
}

fn table(m: &DemoMatrix, style: &Style) -> Table {
    let mut table = style.table();
    let mut header = vec![Cell::new("model")];
    header.extend(m.checks.iter().map(|c| Cell::new(column_title(c.as_str()))));
    table.set_header(header);
    for r in &m.rows {
        let mut cells = vec![Cell::new(&r.model)];
        cells.extend(r.cells.iter().map(|c| cell(c, style)));
        table.add_row(cells);
    }
    for (i, column) in table.column_iter_mut().enumerate() {
        // Check columns are narrow; one space between them is enough.
        column.set_padding(if i == 0 { (0, 2) } else { (0, 1) });
        if i > 0 {
            column.set_cell_alignment(CellAlignment::Left);
        }
    }
    table
}

/// `grad-flow` → `grad\nflow`: two short header lines keep the columns narrow.
fn column_title(id: &str) -> String {
    id.replacen('-', "\n", 1)
}

/// `fail ✓`, `pass ✗`, or the bare verdict when nothing is expected.
fn cell(c: &MatrixCell, style: &Style) -> Cell {
    let verdict = short(c.actual);
    match c.matched {
        Some(true) => style.status_cell(Status::Pass, format!("{verdict} {MATCHED}")),
        Some(false) => style.status_cell(Status::Fail, format!("{verdict} {MISMATCHED}")),
        None if c.actual == Status::Error => {
            style.status_cell(Status::Error, format!("{verdict} {MISMATCHED}"))
        }
        None => Cell::new(verdict),
    }
}

fn short(s: Status) -> &'static str {
    match s {
        Status::Skipped => "skip",
        Status::Error => "err",
        other => other.as_str(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mldebug_diagnostics::CheckId;
    use mldebug_judge::matrix::{DemoMatrix, Expected, MatrixRow};

    fn cell(check: CheckId, expected: Option<Expected>, actual: Status) -> MatrixCell {
        MatrixCell {
            check,
            expected,
            actual,
            matched: Expected::judge(expected, actual),
            summary: format!("{check} said {actual}"),
        }
    }

    fn matrix(twin_overfit: Status) -> DemoMatrix {
        let checks = vec![CheckId::InitLoss, CheckId::Overfit];
        let rows = vec![
            MatrixRow {
                model: "mlp".into(),
                clean: true,
                twin_of: None,
                breaks: String::new(),
                cells: vec![
                    cell(CheckId::InitLoss, Some(Expected::NoFail), Status::Pass),
                    cell(CheckId::Overfit, Some(Expected::NoFail), Status::Warn),
                ],
            },
            MatrixRow {
                model: "mlp-lr-x100".into(),
                clean: false,
                twin_of: Some("mlp".into()),
                breaks: "learning rate ×100".into(),
                cells: vec![
                    cell(CheckId::InitLoss, None, Status::Pass),
                    cell(CheckId::Overfit, Some(Expected::Fail), twin_overfit),
                ],
            },
        ];
        let all: Vec<&MatrixCell> = rows.iter().flat_map(|r| &r.cells).collect();
        DemoMatrix {
            device: "cpu".into(),
            seed: 0,
            checks,
            matched: all.iter().filter(|c| c.matched == Some(true)).count(),
            expected: all.iter().filter(|c| c.expected.is_some()).count(),
            errors: all.iter().filter(|c| c.actual == Status::Error).count(),
            rows,
        }
    }

    #[test]
    fn every_expected_verdict_matched() {
        let m = matrix(Status::Fail);
        assert!(m.all_matched());
        let text = render(&m, &Style::plain());
        let twin = text.lines().find(|l| l.starts_with("mlp-lr-x100")).unwrap();
        assert!(twin.contains("pass") && twin.contains("fail ✓"), "{text}");
        assert!(
            !twin.contains("pass ✓"),
            "no mark where nothing is expected:\n{text}"
        );
        assert!(
            text.ends_with("\n3 of 3 expected verdicts matched\n"),
            "{text}"
        );
        assert!(!text.contains(&format!("{MISMATCHED} mlp")), "{text}");
    }

    #[test]
    fn a_missed_bug_is_listed_with_the_command_to_look_closer() {
        let m = matrix(Status::Pass);
        assert!(!m.all_matched());
        let text = render(&m, &Style::plain());
        assert!(
            text.contains("✗ mlp-lr-x100 · overfit: pass (expected fail): overfit said pass"),
            "{text}"
        );
        assert!(text.contains("    mldebug check overfit --model zoo::mlp-lr-x100"));
        assert!(
            text.ends_with("\n2 of 3 expected verdicts matched\n"),
            "{text}"
        );
    }

    #[test]
    fn an_error_counts_against_the_demo_even_where_nothing_was_expected() {
        let mut m = matrix(Status::Fail);
        m.rows[1].cells[0] = cell(CheckId::InitLoss, None, Status::Error);
        m.errors = 1;
        assert!(!m.all_matched());
        let text = render(&m, &Style::plain());
        assert!(text.contains("err ✗"), "{text}");
        assert!(text.contains("(no error)"), "{text}");
        assert!(text.ends_with("3 of 3 expected verdicts matched; 1 check could not run\n"));
    }

    #[test]
    fn headers_split_check_ids_over_two_lines() {
        assert_eq!(column_title("class-balance"), "class\nbalance");
        assert_eq!(column_title("overfit"), "overfit");
    }
}
