//! One run as `doctor` sees it: a plain-text log, a run file of another tool, or a trace of
//! `mldebug run`, with what was read from it. Made by [`read`](super::read) and
//! [`trace_read`](super::trace_read), judged by [`report`](super::report).

use mldebug_doctor::textlog::ReadReport;
use mldebug_doctor::RunHistory;
use std::path::PathBuf;

/// One run as `doctor` sees it.
#[derive(Debug, Clone)]
pub struct Run {
    pub name: String,
    /// The file or directory it was read from.
    pub source: PathBuf,
    /// The place inside `source` when it holds several runs.
    pub place: String,
    pub seed: Option<String>,
    pub history: RunHistory,
    /// For a plain-text log: which lines were read.
    pub text: Option<ReadReport>,
    /// For a run trace (`mldebug run --trace`): its processes, judged by the trace judgement.
    pub trace: Option<Vec<mldebug_doctor::trace::Process>>,
    /// What a person should know about how it was read (a cut last line left out).
    pub notes: Vec<String>,
}
