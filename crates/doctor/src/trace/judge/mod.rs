//! The judgement of a run trace: one module per concern, each reading the processes' records
//! and pushing findings. Findings of the same symptom on several ranks become one finding with
//! the ranks named; the cross-rank comparisons live in [`ranks`].

mod adapters;
mod clipping;
mod data;
mod decay;
mod labels;
mod lifecycle;
mod loads;
mod losses;
mod memory_estimate;
mod mode;
mod numerics;
mod optimizer;
mod ranges;
mod ranks;
mod shards;
mod stages;
mod sync_bn;
mod syncs;
mod update;

use super::read::Process;
use crate::finding::{Finding, Symptom};
use crate::history::RunHistory;
use crate::{diagnose, Options};
use std::collections::BTreeMap;

/// The log detectors whose findings a trace of the first steps supports. The others judge a
/// curve's long-run shape (stuck, overfitting, schedule, throughput), which a few dozen steps,
/// many of them the slow first ones, cannot show.
const LOG_SYMPTOMS: [Symptom; 6] = [
    Symptom::LossNonfinite,
    Symptom::LossZero,
    Symptom::LossDiverging,
    Symptom::LossSpikes,
    Symptom::GradNormExplosion,
    Symptom::MemoryGrowth,
];

/// What a trace says: the findings, worst first, and each training process's series.
#[derive(Debug, Clone, Default)]
pub struct TraceDiagnosis {
    /// Every finding, worst first, then by step.
    pub findings: Vec<Finding>,
    /// Per training process (the ones that built a model or an optimizer): its label and its
    /// series as a run history (loss, learning rate, grad norm, memory, step time).
    pub histories: Vec<(String, RunHistory)>,
}

/// Judges every process of one run (all ranks of one launch, or traces merged afterwards).
pub fn judge(processes: &[Process]) -> TraceDiagnosis {
    let trainers: Vec<&Process> = processes.iter().filter(|p| p.is_trainer()).collect();
    let mut per_rank: Vec<Finding> = Vec::new();
    let mut histories = Vec::new();
    for p in &trainers {
        let mut out = Vec::new();
        optimizer::judge(p, &mut out);
        update::judge(p, &mut out);
        clipping::judge(p, &mut out);
        decay::judge(p, &mut out);
        adapters::judge(p, &mut out);
        losses::judge_kept(p, &mut out);
        labels::judge(p, &mut out);
        ranges::judge(p, &mut out);
        numerics::judge(p, &mut out);
        numerics::judge_limits(p, &mut out);
        mode::judge(p, &mut out);
        data::judge(p, &mut out);
        syncs::judge(p, &mut out);
        lifecycle::judge_process(p, &mut out);
        loads::judge(p, &mut out);
        stages::judge(p, &mut out);
        let history = history(p);
        let log = diagnose(&history, &Options::default());
        out.extend(
            log.findings
                .into_iter()
                .filter(|f| LOG_SYMPTOMS.contains(&f.symptom))
                .filter(|f| !numerics::covered(p, f)),
        );
        numerics::annotate_spikes(p, &mut out);
        clipping::clipped_jumps(p, &mut out);
        losses::judge_summed(p, &mut out);
        for f in &mut out {
            f.ranks = vec![p.rank()];
        }
        per_rank.extend(out);
        histories.push((p.label(), history));
    }
    let mut findings = merge_ranks(per_rank, trainers.len());
    lifecycle::judge_run(processes, &trainers, &mut findings);
    ranks::judge(&trainers, &mut findings);
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.step.total_cmp(&b.step))
            .then(a.symptom.cmp(&b.symptom))
    });
    TraceDiagnosis {
        findings,
        histories,
    }
}

/// One finding per symptom and series: the first rank's, naming every rank that showed it.
/// A single process keeps no rank list.
fn merge_ranks(findings: Vec<Finding>, processes: usize) -> Vec<Finding> {
    let mut by_key: BTreeMap<(Symptom, String), Finding> = BTreeMap::new();
    let mut order = Vec::new();
    for f in findings {
        let key = f.key();
        match by_key.get_mut(&key) {
            Some(first) => first.ranks.extend(f.ranks),
            None => {
                order.push(key.clone());
                by_key.insert(key, f);
            }
        }
    }
    order
        .into_iter()
        .filter_map(|k| by_key.remove(&k))
        .map(|mut f| {
            if processes <= 1 {
                f.ranks.clear();
            } else {
                let r = std::mem::take(&mut f.ranks);
                f = f.ranks(r);
            }
            f
        })
        .collect()
}

/// A process's steps as the series the log detectors read.
pub fn history(p: &Process) -> RunHistory {
    let mut h: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut push = |name: &str, step: u64, v: Option<f64>| {
        if let Some(v) = v {
            h.entry(name.to_string())
                .or_default()
                .push((step as f64, v));
        }
    };
    for s in &p.steps {
        push("loss", s.step, s.loss);
        push("learning_rate", s.step, s.lr);
        push("grad_norm", s.step, s.grad_norm);
        push("step_time", s.step, s.step_s);
        if let Some(m) = &s.memory {
            // Allocated memory where the device counts it; the resident set on CPU.
            push("memory_bytes", s.step, m.allocated.or(m.rss));
        }
    }
    RunHistory::new(h, BTreeMap::new())
}

/// The model a process trains, when one was seen: the largest of those the stepping optimizer
/// holds tensors of (each has a `grads` record), else the largest root module. A copy used
/// only under `no_grad` and updated from another (an EMA, a teacher) or a feature extractor
/// run without gradients is no trainee, however large.
fn main_model(p: &Process) -> Option<&super::records::Model> {
    p.models
        .iter()
        .filter(|m| p.grads.iter().any(|g| g.model == m.model))
        .max_by_key(|m| m.parameters)
        .or_else(|| p.models.iter().max_by_key(|m| m.parameters))
}

/// A share as a percentage for a summary.
fn pct(x: f64) -> String {
    format!("{:.0}%", 100.0 * x)
}

/// Whether the process's updates are written by hand (no `torch.optim` optimizer stepped): read
/// by the optimizer's findings and by the clipping's (which norm an update applied).
fn hand_written(p: &Process) -> bool {
    !p.optimizers.is_empty() && p.optimizers.iter().all(|o| o.manual)
}

#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_adapters;
#[cfg(test)]
mod tests_cadence;
#[cfg(test)]
mod tests_clipping;
#[cfg(test)]
mod tests_data_wait;
#[cfg(test)]
mod tests_labels;
#[cfg(test)]
mod tests_limits;
#[cfg(test)]
mod tests_loads;
#[cfg(test)]
mod tests_losses;
#[cfg(test)]
mod tests_memory_estimate;
#[cfg(test)]
mod tests_mode;
#[cfg(test)]
mod tests_ranges;
#[cfg(test)]
mod tests_ranks;
#[cfg(test)]
mod tests_small_update;
#[cfg(test)]
mod tests_styles;
#[cfg(test)]
mod tests_syncs;
#[cfg(test)]
mod tests_update_memory;
