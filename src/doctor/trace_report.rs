//! A run trace as a doctor report: the findings of `mldebug_doctor::trace::judge`, each linked
//! to its PLAYBOOK row, and each training process's loss, learning rate and memory as series.
//! `mldebug run` builds it from the traces it just collected; `mldebug doctor TRACE.jsonl`
//! from a kept one, so both say the same.

use super::report::{link, Counts, LinkedFinding, RunReport, SeriesSummary};
use crate::catalog::Catalog;
use mldebug_doctor::trace::{judge, Process};

/// The report of one run's processes; `source` names where the trace came from.
pub fn build(name: &str, source: &str, processes: &[Process], catalog: &Catalog) -> RunReport {
    let d = judge(processes);
    let series = d
        .histories
        .first()
        .map(|(_, h)| {
            h.series
                .iter()
                .filter_map(|s| SeriesSummary::of(s, s.role))
                .collect()
        })
        .unwrap_or_default();
    RunReport {
        name: name.to_string(),
        source: source.to_string(),
        place: String::new(),
        read: None,
        series,
        findings: d
            .findings
            .into_iter()
            .map(|f| LinkedFinding {
                playbook: link(catalog, f.symptom.id()),
                finding: f,
            })
            .collect(),
    }
}

/// Findings of a run report by severity.
pub fn count(run: &RunReport) -> Counts {
    let mut c = Counts::default();
    for f in &run.findings {
        c.add(f.finding.severity);
    }
    c
}
