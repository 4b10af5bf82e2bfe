//! What every judgement shares: the run's context, the next command after a verdict, the
//! findings for a check that cannot judge or could not run.

use mldebug_report::{CheckId, Finding, Status, Subject, Task};

/// Default optimizer steps of the checks that train (overfit).
pub const DEFAULT_STEPS: usize = 200;
/// The most optimizer steps `--steps` accepts.
pub const MAX_STEPS: usize = 100_000;

/// What a judgement needs besides the measurement: the model as the next command names it, its
/// task, and the run's settings the words quote.
#[derive(Debug, Clone, PartialEq)]
pub struct Ctx {
    /// The model, as the next command names it.
    pub subject: Subject,
    /// What the model does: classification or causal language modelling.
    pub task: Task,
    /// Optimizer steps asked for (`--steps`).
    pub steps: usize,
    /// The learning rate the checks that train use (`--lr`).
    pub learning_rate: f64,
}

impl Ctx {
    /// `mldebug check <id> --model <m>` (or `--torch <t>`): the usual next command.
    pub fn check_command(&self, id: CheckId) -> String {
        self.subject.command(id.as_str())
    }

    /// The command after a check that passed: the next check in the order `all` runs them, and
    /// after the last one, every check at once.
    pub fn next_after(&self, id: CheckId) -> String {
        let order = CheckId::ALL;
        match order.iter().position(|&c| c == id) {
            Some(i) if i + 1 < order.len() => self.check_command(order[i + 1]),
            _ => self.subject.command("all"),
        }
    }

    /// [`Ctx::next_after`] for a pass, the catalog entry otherwise.
    pub fn next_for(&self, id: CheckId, status: Status) -> String {
        match status {
            Status::Pass => self.next_after(id),
            _ => show_command(id),
        }
    }
}

/// `mldebug show check-<id>`: where a person reads how to fix what a check found.
pub fn show_command(id: CheckId) -> String {
    mldebug_report::show_command(id.entry())
}

/// A finding for a model or task the check cannot judge (never a pass).
pub fn skipped(id: CheckId, reason: impl Into<String>) -> Finding {
    Finding::new(id, Status::Skipped, reason).next(show_command(id))
}

/// At most this many further lines of an error (a backtrace can run to hundreds).
const ERROR_DETAIL_LINES: usize = 12;

/// A check that could not run: the model (or the user's code) raised. The first line is the
/// summary, the next non-empty lines (at most 12) the details; the next command reruns it.
pub fn error_finding(id: CheckId, message: &str, ctx: &Ctx) -> Finding {
    let mut lines = message.lines();
    let first = lines.next().unwrap_or("").trim().to_string();
    let mut finding = Finding::new(id, Status::Error, first).next(ctx.check_command(id));
    finding.details = lines
        .map(str::to_string)
        .filter(|l| !l.trim().is_empty())
        .take(ERROR_DETAIL_LINES)
        .collect();
    finding
}

/// Worst first: fail, then warn, then the rest.
pub(crate) fn rank(s: Status) -> u8 {
    match s {
        Status::Fail => 2,
        Status::Warn => 1,
        _ => 0,
    }
}

#[cfg(test)]
pub(crate) fn test_ctx(task: Task) -> Ctx {
    Ctx {
        subject: Subject::Candle("zoo::mlp".into()),
        task,
        steps: DEFAULT_STEPS,
        learning_rate: 3e-3,
    }
}
