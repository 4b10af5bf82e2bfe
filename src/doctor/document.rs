//! The doctor report as data: per run, the series judged (with their points, for sparklines and
//! plots) and the findings, each with its PLAYBOOK row, and the counts by severity. What
//! [`report`](super::report) builds from logs and [`trace_report`](super::trace_report) from run
//! traces; the terminal, JSON and SVG renderers read it.

use mldebug_doctor::history::Series;
use mldebug_doctor::seeds::SeedDifference;
use mldebug_doctor::textlog::ReadReport;
use mldebug_doctor::{names::Role, Finding, Severity};
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct Report {
    pub runs: Vec<RunReport>,
    /// Symptoms shown by some seeds of a configuration and not by others.
    pub seed_differences: Vec<SeedDifference>,
    pub counts: Counts,
}

/// Findings by severity, over every run.
#[derive(Debug, Default, Serialize)]
pub struct Counts {
    pub fail: usize,
    pub warn: usize,
    pub info: usize,
}

#[derive(Debug, Serialize)]
pub struct RunReport {
    pub name: String,
    pub source: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub place: String,
    /// For a plain-text log: which lines were read, by shape.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<ReadReport>,
    pub series: Vec<SeriesSummary>,
    pub findings: Vec<LinkedFinding>,
}

/// A series judged, summarised.
#[derive(Debug, Serialize)]
pub struct SeriesSummary {
    pub metric: String,
    pub role: Role,
    pub points: usize,
    pub first_step: f64,
    pub last_step: f64,
    pub first: f64,
    pub last: f64,
    /// Its (step, value) points, for the sparkline and the plot.
    #[serde(skip)]
    pub data: Vec<(f64, f64)>,
}

/// A finding and the PLAYBOOK row that explains it.
#[derive(Debug, Serialize)]
pub struct LinkedFinding {
    #[serde(flatten)]
    pub finding: Finding,
    pub playbook: Option<PlaybookLink>,
}

/// The PLAYBOOK symptom row with the finding's id.
#[derive(Debug, Serialize)]
pub struct PlaybookLink {
    pub row: String,
    /// `PLAYBOOK.md#<id>`.
    pub link: String,
    pub symptom: String,
    /// The row's first hypotheses, most likely first.
    pub hypotheses: Vec<String>,
    /// The commands the row names.
    pub next: Vec<String>,
}

impl Report {
    /// The worst severity found in any run.
    pub fn worst(&self) -> Option<Severity> {
        self.runs
            .iter()
            .flat_map(|r| r.findings.iter().map(|f| f.finding.severity))
            .max()
    }
}

impl SeriesSummary {
    /// A series judged in `role`, summarised; `None` when it has no point.
    pub fn of(s: &Series, role: Role) -> Option<SeriesSummary> {
        let (first, last) = (s.points.first()?, s.points.last()?);
        Some(SeriesSummary {
            metric: s.name.clone(),
            role,
            points: s.points.len(),
            first_step: first.0,
            last_step: last.0,
            first: first.1,
            last: last.1,
            data: s.points.clone(),
        })
    }
}

impl Counts {
    /// Counts one finding of severity `s`.
    pub fn add(&mut self, s: Severity) {
        match s {
            Severity::Fail => self.fail += 1,
            Severity::Warn => self.warn += 1,
            Severity::Info => self.info += 1,
        }
    }
}
