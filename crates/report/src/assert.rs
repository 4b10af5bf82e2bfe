//! `assert_pass`: the checks inside a user's `#[test]`, and a finding written out as the few
//! lines a failed assertion shows.

use crate::{Finding, Report, Status};
use std::fmt::Write as _;

impl Finding {
    /// Panic with the finding written out unless it passed (`pass` or `warn`).
    ///
    /// `fail`, `error` and `skipped` all panic: a check that could not judge the model has not
    /// shown it to be sound.
    ///
    /// In a test of a crate that uses `mldebug-diagnostics`:
    ///
    /// ```rust,ignore
    /// checks::overfit::<Net>(&Options::default())?.assert_pass();
    /// ```
    #[track_caller]
    pub fn assert_pass(&self) {
        if !passed(self.status) {
            panic!("{}", describe(self));
        }
    }
}

impl Report {
    /// Panic with every finding that did not pass written out (see [`Finding::assert_pass`]).
    #[track_caller]
    pub fn assert_pass(&self) {
        let bad: Vec<String> = self
            .checks
            .iter()
            .filter(|f| !passed(f.status))
            .map(describe)
            .collect();
        if !bad.is_empty() {
            panic!(
                "{} of {} mldebug checks on {} did not pass:\n\n{}",
                bad.len(),
                self.checks.len(),
                self.model,
                bad.join("\n")
            );
        }
    }
}

fn passed(status: Status) -> bool {
    matches!(status, Status::Pass | Status::Warn)
}

/// A finding as a few readable lines (the text of a failed `assert_pass`).
pub fn describe(f: &Finding) -> String {
    let mut s = format!("mldebug check {}: {}: {}\n", f.check, f.status, f.summary);
    if !f.metrics.is_empty() {
        let metrics: Vec<String> = f.metrics.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(s, "  metrics: {}", metrics.join(", "));
    }
    for d in &f.details {
        let _ = writeln!(s, "  {d}");
    }
    if !f.entry.is_empty() {
        let _ = writeln!(s, "  why:  mldebug show {}", f.entry);
    }
    if !f.next.is_empty() {
        let _ = writeln!(s, "  next: {}", f.next);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CheckId;

    fn finding(status: Status) -> Finding {
        Finding {
            check: CheckId::Overfit,
            status,
            summary: "loss went from 2.30 to 2.29 in 200 steps".into(),
            metrics: [("loss_start".to_string(), 2.3)].into_iter().collect(),
            details: vec!["step 200: loss 2.29".into()],
            entry: "check-overfit".into(),
            next: "mldebug check grad-flow --model crate::Net".into(),
            series: Vec::new(),
        }
    }

    #[test]
    fn assert_pass_accepts_pass_and_warn() {
        finding(Status::Pass).assert_pass();
        finding(Status::Warn).assert_pass();
    }

    #[test]
    fn assert_pass_panics_readably_on_fail_error_and_skipped() {
        for status in [Status::Fail, Status::Error, Status::Skipped] {
            let f = finding(status);
            let msg = std::panic::catch_unwind(|| f.assert_pass())
                .expect_err("must panic")
                .downcast::<String>()
                .unwrap();
            assert!(
                msg.contains(&format!("overfit: {status}: loss went from")),
                "{msg}"
            );
            assert!(msg.contains("next: mldebug check grad-flow"), "{msg}");
        }
        let report = Report {
            model: "crate::Net".into(),
            device: "cpu".into(),
            seed: 0,
            checks: vec![finding(Status::Pass), finding(Status::Fail)],
        };
        let msg = std::panic::catch_unwind(|| report.assert_pass())
            .expect_err("must panic")
            .downcast::<String>()
            .unwrap();
        assert!(
            msg.starts_with("1 of 2 mldebug checks on crate::Net did not pass"),
            "{msg}"
        );
    }
}
