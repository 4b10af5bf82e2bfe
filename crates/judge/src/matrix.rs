//! The demo matrix: every check over a zoo (candle's built-in one, or the PyTorch one), each
//! verdict laid beside the one a correct mldebug must give (buggy twins fail the checks they
//! break; clean models fail none).

use mldebug_report::{CheckId, Report, Status};
use serde::Serialize;

/// A zoo model as the matrix sees it, whichever framework runs it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatrixModel {
    /// Its name in the zoo.
    pub name: String,
    /// A clean model (no planted bug).
    pub clean: bool,
    /// The clean model this one is a buggy twin of.
    pub twin_of: Option<String>,
    /// The bug, in a few words (empty for a clean model).
    pub breaks: String,
    /// The checks it must fail.
    pub fails: Vec<CheckId>,
}

/// What a correct mldebug must answer for one model × check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expected {
    /// The model has the bug this check exists to catch.
    Fail,
    /// A clean model: pass, warn or skipped, never fail (and never error).
    NoFail,
}

impl Expected {
    /// `Some(true)` when `actual` agrees, `None` when nothing is expected of this cell.
    pub fn judge(expected: Option<Expected>, actual: Status) -> Option<bool> {
        match expected? {
            Expected::Fail => Some(actual == Status::Fail),
            Expected::NoFail => Some(matches!(
                actual,
                Status::Pass | Status::Warn | Status::Skipped
            )),
        }
    }

    /// `fail` or `no fail`, as the table writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Expected::Fail => "fail",
            Expected::NoFail => "no fail",
        }
    }
}

/// One model × check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatrixCell {
    /// The check.
    pub check: CheckId,
    /// `null` for the checks a buggy twin is not known to break: any verdict but `error` is fine.
    pub expected: Option<Expected>,
    /// The verdict it gave.
    pub actual: Status,
    /// Whether `actual` agrees with `expected`; `null` when nothing was expected.
    pub matched: Option<bool>,
    /// Its one-line summary.
    pub summary: String,
}

/// One zoo model's row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatrixRow {
    /// The model's zoo name.
    pub model: String,
    /// A clean model (no planted bug).
    pub clean: bool,
    /// The clean model this one is a buggy twin of.
    pub twin_of: Option<String>,
    /// The bug, in a few words (empty for a clean model).
    pub breaks: String,
    /// One cell per check, in the matrix's check order.
    pub cells: Vec<MatrixCell>,
}

/// The whole demo: what `--json` prints and what the table shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DemoMatrix {
    /// Where the checks ran.
    pub device: String,
    /// The seed every model ran with.
    pub seed: u64,
    /// The columns.
    pub checks: Vec<CheckId>,
    /// One row per zoo model.
    pub rows: Vec<MatrixRow>,
    /// Cells whose verdict matched the expected one.
    pub matched: usize,
    /// Cells with an expected verdict.
    pub expected: usize,
    /// Cells (expected or not) where the check could not run.
    pub errors: usize,
}

impl DemoMatrix {
    /// Lay out the reports (one per model, in zoo order) against the models' expectations.
    pub fn build(models: &[MatrixModel], reports: &[Report], checks: &[CheckId]) -> DemoMatrix {
        let rows: Vec<MatrixRow> = models
            .iter()
            .zip(reports)
            .map(|(m, r)| row(m, r, checks))
            .collect();
        let cells = || rows.iter().flat_map(|r| r.cells.iter());
        DemoMatrix {
            device: reports
                .first()
                .map(|r| r.device.clone())
                .unwrap_or_default(),
            seed: reports.first().map(|r| r.seed).unwrap_or_default(),
            checks: checks.to_vec(),
            matched: cells().filter(|c| c.matched == Some(true)).count(),
            expected: cells().filter(|c| c.expected.is_some()).count(),
            errors: cells().filter(|c| c.actual == Status::Error).count(),
            rows,
        }
    }

    /// Every expected verdict matched and no check errored.
    pub fn all_matched(&self) -> bool {
        self.matched == self.expected && self.errors == 0
    }
}

fn row(model: &MatrixModel, report: &Report, checks: &[CheckId]) -> MatrixRow {
    let cells = checks
        .iter()
        .map(|&check| {
            let expected = if model.fails.contains(&check) {
                Some(Expected::Fail)
            } else if model.clean {
                Some(Expected::NoFail)
            } else {
                None
            };
            let (actual, summary) = match report.checks.iter().find(|f| f.check == check) {
                Some(f) => (f.status, f.summary.clone()),
                None => (Status::Error, "the check did not report".to_string()),
            };
            MatrixCell {
                check,
                expected,
                actual,
                matched: Expected::judge(expected, actual),
                summary,
            }
        })
        .collect();
    MatrixRow {
        model: model.name.clone(),
        clean: model.clean,
        twin_of: model.twin_of.clone(),
        breaks: model.breaks.clone(),
        cells,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mldebug_report::Finding;

    /// A report where every check in `failing` fails and the others pass.
    fn report_failing(failing: &[CheckId]) -> Report {
        Report {
            model: "zoo::test".into(),
            device: "cpu".into(),
            seed: 3,
            checks: CheckId::ALL
                .iter()
                .map(|&c| {
                    let status = if failing.contains(&c) {
                        Status::Fail
                    } else {
                        Status::Pass
                    };
                    Finding::new(c, status, "")
                })
                .collect(),
        }
    }

    fn models() -> [MatrixModel; 2] {
        [
            MatrixModel {
                name: "clean".into(),
                clean: true,
                twin_of: None,
                breaks: String::new(),
                fails: Vec::new(),
            },
            MatrixModel {
                name: "twin".into(),
                clean: false,
                twin_of: Some("clean".into()),
                breaks: "a bug".into(),
                fails: vec![CheckId::GradFlow],
            },
        ]
    }

    #[test]
    fn the_matrix_counts_expected_verdicts_only() {
        let reports = [
            report_failing(&[]),
            report_failing(&[CheckId::GradFlow, CheckId::Overfit]),
        ];
        let m = DemoMatrix::build(&models(), &reports, &CheckId::ALL);
        // A no-fail cell per check on the clean model, 1 fail cell on the twin; its overfit fail
        // is free.
        let n = CheckId::ALL.len();
        assert_eq!((m.matched, m.expected, m.errors), (n + 1, n + 1, 0));
        assert!(m.all_matched());
        assert_eq!((m.device.as_str(), m.seed), ("cpu", 3));
        let overfit = m.rows[1].cells.iter().find(|c| c.check == CheckId::Overfit);
        assert_eq!(overfit.unwrap().matched, None);
    }

    #[test]
    fn a_missed_bug_or_a_false_alarm_fails_the_demo() {
        let missed = [report_failing(&[]), report_failing(&[])];
        let n = CheckId::ALL.len();
        let m = DemoMatrix::build(&models(), &missed, &CheckId::ALL);
        assert_eq!((m.matched, m.expected), (n, n + 1));
        assert!(!m.all_matched());
        let false_alarm = [
            report_failing(&[CheckId::InitLoss]),
            report_failing(&[CheckId::GradFlow]),
        ];
        let m = DemoMatrix::build(&models(), &false_alarm, &CheckId::ALL);
        assert_eq!((m.matched, m.expected), (n, n + 1));
    }

    #[test]
    fn a_check_missing_from_a_report_is_an_error_cell() {
        let mut partial = report_failing(&[CheckId::GradFlow]);
        partial.checks.retain(|f| f.check != CheckId::BatchLeak);
        let m = DemoMatrix::build(&models()[1..], &[partial], &CheckId::ALL);
        assert_eq!(m.errors, 1);
        assert!(!m.all_matched());
    }

    #[test]
    fn expectations_judge_verdicts() {
        assert_eq!(
            Expected::judge(Some(Expected::Fail), Status::Fail),
            Some(true)
        );
        assert_eq!(
            Expected::judge(Some(Expected::Fail), Status::Warn),
            Some(false)
        );
        assert_eq!(
            Expected::judge(Some(Expected::Fail), Status::Error),
            Some(false)
        );
        assert_eq!(
            Expected::judge(Some(Expected::NoFail), Status::Warn),
            Some(true)
        );
        assert_eq!(
            Expected::judge(Some(Expected::NoFail), Status::Skipped),
            Some(true)
        );
        assert_eq!(
            Expected::judge(Some(Expected::NoFail), Status::Fail),
            Some(false)
        );
        assert_eq!(
            Expected::judge(Some(Expected::NoFail), Status::Error),
            Some(false)
        );
        assert_eq!(Expected::judge(None, Status::Fail), None);
    }
}
