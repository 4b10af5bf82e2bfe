//! Host-device synchronisations per step (CUDA): how often the program's own code made the CPU
//! wait for the GPU in the steps the probe counted (`syncs` and `sync_sites` of optimizer 0's
//! step records; TRACE.md). Each wait empties the queue of kernels the CPU had launched ahead,
//! so the GPU idles while Python catches up. One a step (reading the loss for a log line) is
//! common and cheap at typical step times; many a step (a value read per sample or per layer, a
//! tensor printed, a Python condition on a tensor) is a loop that cannot run ahead.

use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;
use std::collections::BTreeMap;

/// Waits per step at or above which the finding warns: our own default, not a published figure.
/// Below it, any wait at all is reported as info with its call sites.
pub const WARN_PER_STEP: f64 = 10.0;
/// Call sites named in the summary.
const SITES_SHOWN: usize = 3;

pub(super) fn judge(p: &Process, out: &mut Vec<Finding>) {
    let counted: Vec<_> = p
        .steps
        .iter()
        .filter(|s| s.optimizer == 0)
        .filter_map(|s| s.syncs.map(|n| (s, n)))
        .collect();
    let Some((first, _)) = counted.first() else {
        return;
    };
    let total: u64 = counted.iter().map(|(_, n)| n).sum();
    let per_step = total as f64 / counted.len() as f64;
    if total == 0 {
        return;
    }
    let mut by_site: BTreeMap<&str, u64> = BTreeMap::new();
    for (s, _) in &counted {
        for site in &s.sync_sites {
            *by_site
                .entry(
                    site.location
                        .as_deref()
                        .unwrap_or("(no line of the program)"),
                )
                .or_default() += site.count;
        }
    }
    let mut sites: Vec<(&str, u64)> = by_site.into_iter().collect();
    sites.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let n = counted.len() as f64;
    let named: Vec<String> = sites
        .iter()
        .take(SITES_SHOWN)
        .map(|(w, c)| format!("{} ({} a step)", w, per_step_text(*c as f64 / n)))
        .collect();
    let severity = if per_step >= WARN_PER_STEP {
        Severity::Warn
    } else {
        Severity::Info
    };
    let steps: Vec<String> = counted.iter().map(|(s, _)| s.step.to_string()).collect();
    let mut finding = Finding::new(Symptom::HostSyncs, severity, "syncs", first.step as f64)
        .summary(format!(
            "the loop makes the CPU wait for the GPU {} a step (steps {}, counted by torch's \
             sync debug mode), at {}; each wait (a .item(), .cpu(), print or Python condition \
             on a tensor) stops the CPU from queueing the next kernels",
            if per_step == 1.0 {
                "once".to_string()
            } else {
                format!("{} times", per_step_text(per_step))
            },
            steps.join(", "),
            named.join(", ")
        ))
        .number("syncs_per_step", per_step)
        .number("steps", n)
        .number("sites", sites.len() as f64);
    if let Some((w, _)) = sites.first().filter(|(w, _)| w.contains(':')) {
        finding = finding.at(Some((*w).to_string()));
    }
    out.push(finding);
}

fn per_step_text(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}
