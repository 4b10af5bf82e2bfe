//! The doctor report: per run, the series judged (with their points, for sparklines and plots),
//! the findings, each linked to the PLAYBOOK symptom row with the same id, and the symptoms that
//! differ between seeds of one configuration. Built once; the terminal, JSON and SVG renderers
//! read it.

use super::read::Run;
use crate::catalog::Catalog;
use mldebug_doctor::history::Series;
use mldebug_doctor::seeds::{self, RunFindings, SeedDifference};
use mldebug_doctor::textlog::ReadReport;
use mldebug_doctor::{diagnose, names::Role, Finding, Options, Severity};
use serde::Serialize;

/// Hypotheses quoted from a PLAYBOOK row in the report (the row has the rest).
const MAX_HYPOTHESES: usize = 3;

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

/// Diagnoses every run and links the findings to `catalog`'s symptom rows.
pub fn build(runs: &[Run], metrics: &[String], catalog: &Catalog) -> Report {
    let opts = Options {
        metrics: metrics.to_vec(),
    };
    let mut out = Vec::with_capacity(runs.len());
    let mut diagnoses = Vec::with_capacity(runs.len());
    let mut counts = Counts::default();
    let (traces, logs): (Vec<&Run>, Vec<&Run>) = runs.iter().partition(|r| r.trace.is_some());
    for run in logs.iter().copied() {
        let d = diagnose(&run.history, &opts);
        for f in &d.findings {
            counts.add(f.severity);
        }
        let series = d
            .judged
            .iter()
            .filter_map(|j| summary(run, &j.metric, j.role))
            .collect();
        out.push(RunReport {
            name: run.name.clone(),
            source: run.source.display().to_string(),
            place: run.place.clone(),
            read: run.text.clone(),
            series,
            findings: d
                .findings
                .iter()
                .map(|f| LinkedFinding {
                    finding: f.clone(),
                    playbook: link(catalog, f.symptom.id()),
                })
                .collect(),
        });
        diagnoses.push(d);
    }
    if !traces.is_empty() {
        // Every trace given is one run's processes (the ranks of one launch, or the nodes of a
        // multi-node launch): judged together, so ranks are compared.
        let processes: Vec<_> = traces
            .iter()
            .flat_map(|r| r.trace.iter().flatten().cloned())
            .collect();
        let names: Vec<&str> = traces.iter().map(|r| r.name.as_str()).collect();
        let run =
            super::trace_report::build(&names.join(", "), &names.join(", "), &processes, catalog);
        for f in &run.findings {
            counts.add(f.finding.severity);
        }
        out.push(run);
    }
    let seed_differences = seeds::differences(
        &logs
            .iter()
            .zip(&diagnoses)
            .map(|(r, d)| RunFindings {
                name: &r.name,
                seed: r.seed.as_deref(),
                config: &r.history.config,
                findings: &d.findings,
            })
            .collect::<Vec<_>>(),
    );
    Report {
        runs: out,
        seed_differences,
        counts,
    }
}

fn summary(run: &Run, metric: &str, role: Role) -> Option<SeriesSummary> {
    SeriesSummary::of(run.history.get(metric)?, role)
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

/// The symptom row with this id (in the symptom table or the log-symptoms table), if the
/// catalog has it.
pub fn link(catalog: &Catalog, id: &str) -> Option<PlaybookLink> {
    link_as(catalog, id, Framework::Any)
}

/// Whose program a finding is about: a log could come from any framework; a run trace comes
/// from a PyTorch program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framework {
    /// Every hypothesis and command of the row.
    Any,
    /// The row as it applies to PyTorch: hypotheses about candle left out, a check on a candle
    /// model (`--model crate::Net`) asked of the PyTorch model (`--torch model.py:Net`), and
    /// candle-only entries left out.
    PyTorch,
}

/// A candle model in a row's command, and the PyTorch model that takes its place.
const CANDLE_MODEL: (&str, &str) = ("--model crate::Net", "--torch model.py:Net");

/// [`link`], for a program of this framework.
pub fn link_as(catalog: &Catalog, id: &str, framework: Framework) -> Option<PlaybookLink> {
    link_without(catalog, id, framework, &[])
}

/// [`link_as`], leaving out the hypotheses that hold any of the `ruled_out` phrases (what the
/// measurement excluded: a finding's [`ruled_out`](mldebug_doctor::Finding::ruled_out)).
pub fn link_without(
    catalog: &Catalog,
    id: &str,
    framework: Framework,
    ruled_out: &[String],
) -> Option<PlaybookLink> {
    let row = catalog
        .symptoms
        .iter()
        .chain(&catalog.log_symptoms)
        .find(|s| s.id == id)?;
    let torch = framework == Framework::PyTorch;
    let candle_only = |text: &str| text.to_ascii_lowercase().contains("candle");
    Some(PlaybookLink {
        row: row.id.clone(),
        link: format!("PLAYBOOK.md#{}", row.id),
        symptom: row.symptom.clone(),
        hypotheses: row
            .hypotheses
            .iter()
            .filter(|h| !(torch && h.to_ascii_lowercase().starts_with("in candle")))
            .filter(|h| !ruled_out.iter().any(|r| h.contains(r.as_str())))
            .take(MAX_HYPOTHESES)
            .cloned()
            .collect(),
        next: row
            .commands
            .iter()
            .filter(|c| !(torch && candle_only(c)))
            .map(|c| match torch {
                true => c.replace(CANDLE_MODEL.0, CANDLE_MODEL.1),
                false => c.clone(),
            })
            .collect(),
    })
}
