//! The doctor report: per run, the series judged (with their points, for sparklines and plots),
//! the findings, each linked to the PLAYBOOK symptom row with the same id, and the symptoms that
//! differ between seeds of one configuration. Built once; the terminal, JSON and SVG renderers
//! read it.

pub use super::document::{Counts, LinkedFinding, PlaybookLink, Report, RunReport, SeriesSummary};
pub use super::playbook::{link, link_as, link_without, Framework};
use super::run::Run;
use crate::catalog::Catalog;
use mldebug_doctor::names::Role;
use mldebug_doctor::seeds::{self, RunFindings};
use mldebug_doctor::{diagnose, Options};

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
