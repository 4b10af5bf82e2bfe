//! Across ranks: BatchNorm running statistics that differ. Plain BatchNorm under
//! DistributedDataParallel normalises each rank's batch by that batch's own statistics and
//! keeps per-rank running statistics (DDP copies rank 0's buffers to the others at each
//! forward, so the saved model holds rank 0's); `SyncBatchNorm` computes them over every rank.
//! Plain BatchNorm is a legitimate choice when each rank's batch is large, so this is a warn.

use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;
use crate::trace::records::BatchnormModule;
use std::collections::BTreeSet;

/// Sums of running statistics that differ by more than this share of their size differ: the
/// same statistics give the same sums up to rounding in the last bits.
const SUM_TOLERANCE: f64 = 1e-6;
/// Module names a summary lists; the count says how many more.
const NAMES_SHOWN: usize = 4;

fn differs(a: f64, b: f64) -> bool {
    (a - b).abs() > SUM_TOLERANCE * a.abs().max(b.abs()).max(1e-12)
}

/// (max - min) / max |value| over the ranks' values.
fn spread(values: &[f64]) -> f64 {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let size = values.iter().map(|v| v.abs()).fold(0.0, f64::max);
    if size > 0.0 {
        (hi - lo) / size
    } else {
        0.0
    }
}

pub(super) fn judge(ranked: &[&Process], out: &mut Vec<Finding>) {
    let first = ranked[0];
    let mut names: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut compared = BTreeSet::new();
    let mut worst = 0.0f64;
    let mut step0 = None;
    for r0 in &first.batchnorms {
        let others: Option<Vec<_>> = ranked[1..]
            .iter()
            .map(|p| {
                p.batchnorms
                    .iter()
                    .find(|b| b.step == r0.step && b.model == r0.model)
            })
            .collect();
        let Some(others) = others else { continue };
        for m0 in r0.modules.iter().filter(|m| m.class != "SyncBatchNorm") {
            let ms: Option<Vec<&BatchnormModule>> = others
                .iter()
                .map(|b| b.modules.iter().find(|m| m.name == m0.name))
                .collect();
            let Some(ms) = ms else { continue };
            compared.insert(m0.name.clone());
            let (Some(mean0), Some(var0)) = (m0.mean_sum, m0.var_sum) else {
                continue;
            };
            let means: Vec<f64> = ms.iter().filter_map(|m| m.mean_sum).collect();
            let vars: Vec<f64> = ms.iter().filter_map(|m| m.var_sum).collect();
            let apart =
                means.iter().any(|&v| differs(mean0, v)) || vars.iter().any(|&v| differs(var0, v));
            if !apart {
                continue;
            }
            step0.get_or_insert(r0.step);
            let all: Vec<f64> = std::iter::once(var0).chain(vars).collect();
            worst = worst.max(spread(&all));
            if seen.insert(m0.name.clone()) {
                names.push(m0.name.clone());
            }
        }
    }
    let Some(step) = step0 else { return };
    let shown: Vec<String> = names
        .iter()
        .take(NAMES_SHOWN)
        .map(|n| format!("`{n}`"))
        .collect();
    let more = names.len().saturating_sub(NAMES_SHOWN);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    out.push(
        Finding::new(
            Symptom::BatchnormNotSynced,
            Severity::Warn,
            "batchnorm",
            step as f64,
        )
        .summary(format!(
            "BatchNorm running statistics differ across ranks in {} of {} modules ({}{more}; \
             the running variance's sum differs by up to {:.1}%): each rank normalises by its \
             own batch's statistics. Intended when each rank's batch is large; otherwise \
             convert with nn.SyncBatchNorm.convert_sync_batchnorm before wrapping in DDP",
            names.len(),
            compared.len(),
            shown.join(", "),
            100.0 * worst
        ))
        .number("modules_differing", names.len() as f64)
        .number("modules_compared", compared.len() as f64)
        .number("var_spread", worst)
        .ranks(ranked.iter().map(|p| p.rank())),
    );
}
