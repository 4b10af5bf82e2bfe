//! A run trace as a doctor report: the findings of `mldebug_doctor::trace::judge`, each linked
//! to its PLAYBOOK row, and each training process's loss, learning rate and memory as series.
//! `mldebug run` builds it from the traces it just collected; `mldebug doctor TRACE.jsonl`
//! from a kept one, so both say the same.

use super::document::{Counts, LinkedFinding, RunReport, SeriesSummary};
use super::playbook::{link_without, Framework};
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
                playbook: link_without(catalog, f.symptom.id(), Framework::PyTorch, &f.ruled_out),
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

#[cfg(test)]
mod tests {
    use crate::doctor::playbook::{link_as, Framework};

    /// A finding about a PyTorch program points to PyTorch: no candle hypothesis, no candle
    /// command, and the checks it suggests are asked of a PyTorch model. Every row with a
    /// candle model or entry is held to it, not only memory-growth.
    #[test]
    fn a_pytorch_finding_links_to_the_row_as_it_applies_to_pytorch() {
        let catalog = crate::catalog::embedded();
        let mut rewritten = 0;
        for row in catalog.symptoms.iter().chain(&catalog.log_symptoms) {
            let any = link_as(catalog, &row.id, Framework::Any).unwrap();
            let torch = link_as(catalog, &row.id, Framework::PyTorch).unwrap();
            for h in &torch.hypotheses {
                assert!(
                    !h.to_ascii_lowercase().starts_with("in candle"),
                    "{}: {h}",
                    row.id
                );
            }
            for c in &torch.next {
                assert!(!c.contains("crate::"), "{}: {c}", row.id);
                assert!(
                    !c.to_ascii_lowercase().contains("candle"),
                    "{}: {c}",
                    row.id
                );
            }
            if any.next.iter().any(|c| c.contains("--model crate::Net")) {
                assert!(torch
                    .next
                    .iter()
                    .any(|c| c.contains("--torch model.py:Net")));
                rewritten += 1;
            }
        }
        assert!(rewritten > 5, "{rewritten}");
        let memory = link_as(catalog, "memory-growth", Framework::PyTorch).unwrap();
        assert_eq!(memory.next[0], "mldebug check memory --torch model.py:Net");
    }
}
