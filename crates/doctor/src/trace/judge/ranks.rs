//! Across ranks: the same data on several ranks, parameters or gradients that differ after a
//! step (not averaged, or no longer synchronised), a model wrapped for data parallelism on some
//! ranks only, and a straggler (in step time or in data-loader wait). Samples shared or skipped
//! across ranks are judged in [`super::shards`], BatchNorm statistics in [`super::sync_bn`].

use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;
use crate::trace::records::Step;
use std::collections::BTreeMap;

/// Checksums (sums of every element, in float64) that differ by more than this share of their
/// size differ: the same averaged gradients and the same update give the same sums up to
/// rounding in the last bits.
const CHECKSUM_TOLERANCE: f64 = 1e-6;
/// Ranks sharing their batch at this share of the compared steps or more are on the same data.
const SAME_DATA_SHARE: f64 = 0.5;
/// A rank whose median step time is this many times the fastest rank's is a straggler …
const STRAGGLER_RATIO: f64 = 2.0;
/// … when the gap is at least this long (shorter gaps are noise on a shared machine).
const STRAGGLER_GAP_S: f64 = 0.05;
/// A rank whose median data-loader wait is STRAGGLER_RATIO times the least-waiting rank's is a
/// straggler in its data when the gap is at least this long …
const WAIT_GAP_S: f64 = 0.02;
/// … and at least this share of its own median step (a wait the step hides is no straggler).
const WAIT_SHARE_MIN: f64 = 0.2;

pub(super) fn judge(trainers: &[&Process], out: &mut Vec<Finding>) {
    let ranked: Vec<&Process> = trainers
        .iter()
        .copied()
        .filter(|p| p.start.world_size.unwrap_or(1) > 1 && !p.steps.is_empty())
        .collect();
    if ranked.len() < 2 {
        return;
    }
    same_data(&ranked, out);
    checksums(&ranked, out);
    wrapped(&ranked, out);
    straggler(&ranked, out);
    data_straggler(&ranked, out);
    super::shards::judge(&ranked, out);
    super::sync_bn::judge(&ranked, out);
}

/// Steps by number, for each rank.
fn by_step(p: &Process) -> BTreeMap<u64, &Step> {
    p.steps.iter().map(|s| (s.step, s)).collect()
}

/// Each rank's batches, as sets: the share of rank 0's batches (by fingerprint, whatever the
/// step) that another rank also trained on. Ranks whose random draws start from one seed give
/// the same batches even when one of them drew a few more (rank 0 alone evaluating first):
/// then the same batches come a few steps apart, which a comparison of equal steps misses.
fn same_data(ranked: &[&Process], out: &mut Vec<Finding>) {
    let sets: Vec<BTreeMap<&str, u64>> = ranked.iter().map(|p| batches(p)).collect();
    let base = &sets[0];
    if base.is_empty() {
        return;
    }
    let compared = base.len();
    // (rank, batches shared, the most common step offset), the rank sharing most.
    let mut worst: Option<(u32, usize, i64)> = None;
    let mut ranks = Vec::new();
    let mut first: Option<u64> = None;
    for (p, set) in ranked.iter().zip(&sets).skip(1) {
        let mut offsets: BTreeMap<i64, usize> = BTreeMap::new();
        let mut shared = 0usize;
        let mut earliest = None;
        for (fp, step) in base {
            if let Some(other) = set.get(fp) {
                shared += 1;
                *offsets.entry(*other as i64 - *step as i64).or_default() += 1;
                earliest = Some(earliest.map_or(*step, |e: u64| e.min(*step)));
            }
        }
        if (shared as f64) < SAME_DATA_SHARE * compared as f64 {
            continue;
        }
        let offset = offsets
            .iter()
            .max_by_key(|(o, n)| (**n, std::cmp::Reverse(o.abs())))
            .map_or(0, |(o, _)| *o);
        ranks.push(p.rank());
        first = match (first, earliest) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if worst.is_none_or(|w| shared > w.1) {
            worst = Some((p.rank(), shared, offset));
        }
    }
    let Some((other, shared, offset)) = worst else {
        return;
    };
    ranks.insert(0, ranked[0].rank());
    let r0 = ranked[0].rank();
    let when = match offset {
        0 => "at the same steps".to_string(),
        o if o > 0 => format!("{o} step(s) later"),
        o => format!("{} step(s) earlier", -o),
    };
    let cause = cause_of_same_data(ranked[0], offset);
    out.push(
        Finding::new(
            Symptom::RanksSameData,
            Severity::Fail,
            "data",
            first.unwrap_or(1) as f64,
        )
        .summary(format!(
            "ranks train on the same batches: {shared} of the {compared} batches rank {r0} \
             trained on were trained on by rank {other} too, {when}; {cause}"
        ))
        .number("batches_shared", shared as f64)
        .number("batches_compared", compared as f64)
        .number("offset_steps", offset as f64)
        .ranks(ranks)
        .at(ranked[0].loaders.first().and_then(|l| l.location.clone())),
    );
}

/// A rank's batch fingerprints, each with the first step it trained on.
fn batches(p: &Process) -> BTreeMap<&str, u64> {
    let mut out = BTreeMap::new();
    for s in &p.steps {
        if let Some(fp) = s.batch.as_deref() {
            out.entry(fp).or_insert(s.step);
        }
    }
    out
}

/// Why ranks draw the same batches, from how rank 0 drew them.
fn cause_of_same_data(p: &Process, offset: i64) -> String {
    let drift = if offset != 0 {
        " (the same sequence, shifted: one rank made a few draws the others did not, such as an \
         evaluation on rank 0 alone)"
    } else {
        ""
    };
    if p.loaders.is_empty() {
        format!(
            "every rank draws its batches itself (random indices each step, no \
             DistributedSampler) from a generator seeded alike on every rank{drift}, so N \
             processes do the work of one: seed each rank apart (seed + rank) or give each rank \
             its own shard"
        )
    } else if p.loaders.iter().any(|l| l.distributed == Some(true)) {
        format!(
            "the ranks' DistributedSampler hands them the same samples{drift} (num_replicas or \
             rank not set from the process group?), so N processes do the work of one"
        )
    } else {
        format!(
            "the DataLoader has no DistributedSampler and shuffles with the same seed on every \
             rank{drift}, so N processes do the work of one (use a DistributedSampler)"
        )
    }
}

fn differs(a: f64, b: f64) -> bool {
    (a - b).abs() > CHECKSUM_TOLERANCE * a.abs().max(b.abs()).max(1e-12)
}

/// The first step at which some rank's value differs from rank 0's, and the ranks that differ.
fn first_difference(
    ranked: &[&Process],
    value: impl Fn(&Step) -> Option<f64>,
    keep: impl Fn(&Step) -> bool,
) -> Option<(u64, Vec<u32>, usize)> {
    let maps: Vec<_> = ranked.iter().map(|p| by_step(p)).collect();
    let mut compared = 0;
    let mut found = None;
    for (step, s0) in &maps[0] {
        let Some(v0) = value(s0).filter(|_| keep(s0)) else {
            continue;
        };
        let others: Vec<(u32, f64)> = ranked
            .iter()
            .zip(&maps)
            .skip(1)
            .filter_map(|(p, m)| Some((p.rank(), value(m.get(step)?)?)))
            .collect();
        if others.is_empty() {
            continue;
        }
        compared += 1;
        let diff: Vec<u32> = others
            .iter()
            .filter(|o| differs(v0, o.1))
            .map(|o| o.0)
            .collect();
        if !diff.is_empty() && found.is_none() {
            found = Some((*step, diff));
        }
    }
    found.map(|(s, r)| (s, r, compared))
}

/// Per parameter group, on the steps every rank wrote statistics for: the first (step, group)
/// whose value differs from rank 0's, and the ranks that differ. Norms catch what sums miss: a
/// classifier head's gradient sums to zero over its classes on every rank, averaged or not.
fn first_group_difference(
    ranked: &[&Process],
    value: impl Fn(&crate::trace::records::GradGroup) -> Option<f64>,
    keep_step: impl Fn(&Process, u64) -> bool,
) -> Option<(u64, String, Vec<u32>)> {
    let first = ranked[0];
    for g0 in first
        .grads
        .iter()
        .filter(|g| g.model == 0 && keep_step(first, g.step))
    {
        for group in &g0.groups {
            let Some(v0) = value(group) else { continue };
            let diff: Vec<u32> = ranked[1..]
                .iter()
                .filter_map(|p| {
                    let g = p.grads.iter().find(|g| g.model == 0 && g.step == g0.step)?;
                    let v = value(g.groups.iter().find(|x| x.name == group.name)?)?;
                    differs(v0, v).then_some(p.rank())
                })
                .collect();
            if !diff.is_empty() {
                return Some((g0.step, group.name.clone(), diff));
            }
        }
    }
    None
}

/// Whether `step` of `p` ran one backward (not an accumulation step, whose gradients a
/// data-parallel wrapper may leave local on purpose).
fn single_backward(p: &Process, step: u64) -> bool {
    p.steps.iter().any(|s| s.step == step && s.backwards == 1)
}

fn checksums(ranked: &[&Process], out: &mut Vec<Finding>) {
    let ddp = ranked
        .iter()
        .any(|p| p.models.iter().any(|m| m.wrapper.is_some()));
    let by_group = first_group_difference(ranked, |g| g.grad_norm, single_backward);
    let by_sum = first_difference(ranked, |s| s.grad_checksum, |s| s.backwards == 1)
        .map(|(s, r, _)| (s, String::new(), r));
    if let Some((step, group, ranks)) = by_group.or(by_sum) {
        let why = if ddp {
            "some parameters are no longer synchronised by the data-parallel wrapper (replaced, \
             moved or re-created after wrapping)"
        } else {
            "the model is not wrapped in DistributedDataParallel, so nothing averages them"
        };
        let at = if group.is_empty() {
            String::new()
        } else {
            format!(", first in `{group}`")
        };
        out.push(
            Finding::new(
                Symptom::GradsNotAveraged,
                Severity::Fail,
                "gradients",
                step as f64,
            )
            .summary(format!(
                "the gradients differ across ranks at step {step}{at}: {why}"
            ))
            .ranks(std::iter::once(ranked[0].rank()).chain(ranks)),
        );
    }
    if let Some((step, ranks, n)) = first_difference(ranked, |s| s.param_checksum, |_| true) {
        let group = first_group_difference(ranked, |g| g.weight_norm, |_, _| true)
            .map(|(_, g, _)| format!("; the first parameter group that differs: `{g}`"))
            .unwrap_or_default();
        out.push(
            Finding::new(
                Symptom::RanksDiverged,
                Severity::Fail,
                "parameters",
                step as f64,
            )
            .summary(format!(
                "the parameters differ across ranks after step {step} (compared at {n} \
                     steps){group}: the replicas train apart and the saved model is one rank's"
            ))
            .number("first_step", step as f64)
            .number("steps_compared", n as f64)
            .ranks(std::iter::once(ranked[0].rank()).chain(ranks)),
        );
    }
}

fn wrapped(ranked: &[&Process], out: &mut Vec<Finding>) {
    let (with, without): (Vec<&&Process>, Vec<&&Process>) = ranked
        .iter()
        .partition(|p| p.models.iter().any(|m| m.wrapper.is_some()));
    if with.is_empty() || without.is_empty() {
        return;
    }
    out.push(
        Finding::new(Symptom::RanksUnwrapped, Severity::Fail, "model", 1.0)
            .summary(format!(
                "the model is wrapped for data parallelism on rank(s) {} but not on rank(s) {}: \
                 a code path skips the wrapper",
                list(&with),
                list(&without)
            ))
            .ranks(without.iter().map(|p| p.rank())),
    );
}

fn list(ps: &[&&Process]) -> String {
    ps.iter()
        .map(|p| p.rank().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    xs.retain(|x| x.is_finite());
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    Some(xs[xs.len() / 2])
}

fn straggler(ranked: &[&Process], out: &mut Vec<Finding>) {
    let times: Vec<(u32, f64)> = ranked
        .iter()
        .filter_map(|p| {
            Some((
                p.rank(),
                median(p.steps.iter().skip(1).filter_map(|s| s.step_s).collect())?,
            ))
        })
        .collect();
    let (Some(fast), Some(slow)) = (
        times.iter().min_by(|a, b| a.1.total_cmp(&b.1)),
        times.iter().max_by(|a, b| a.1.total_cmp(&b.1)),
    ) else {
        return;
    };
    if slow.1 < STRAGGLER_RATIO * fast.1 || slow.1 - fast.1 < STRAGGLER_GAP_S {
        return;
    }
    out.push(
        Finding::new(Symptom::RankStraggler, Severity::Warn, "step_time", 1.0)
            .summary(format!(
                "rank {} takes {:.3} s per step, {:.1} times rank {}'s {:.3} s: every collective \
                 waits for it",
                slow.0,
                slow.1,
                slow.1 / fast.1,
                fast.0,
                fast.1
            ))
            .number("slowest_s", slow.1)
            .number("fastest_s", fast.1)
            .ranks([slow.0]),
    );
}

/// Per rank: (rank, median data wait, median step time) over the steps after the first.
fn waits(ranked: &[&Process]) -> Vec<(u32, f64, f64)> {
    ranked
        .iter()
        .filter_map(|p| {
            let later = || p.steps.iter().skip(1);
            Some((
                p.rank(),
                median(later().filter_map(|s| s.data_wait_s).collect())?,
                median(later().filter_map(|s| s.step_s).collect())?,
            ))
        })
        .collect()
}

fn data_straggler(ranked: &[&Process], out: &mut Vec<Finding>) {
    let w = waits(ranked);
    let (Some(least), Some(most)) = (
        w.iter().min_by(|a, b| a.1.total_cmp(&b.1)),
        w.iter().max_by(|a, b| a.1.total_cmp(&b.1)),
    ) else {
        return;
    };
    let gap = most.1 - least.1;
    if most.1 < STRAGGLER_RATIO * least.1 || gap < WAIT_GAP_S || gap < WAIT_SHARE_MIN * most.2 {
        return;
    }
    let others: Vec<String> = w
        .iter()
        .filter(|x| x.0 != most.0)
        .map(|x| format!("rank {} {:.3} s", x.0, x.1))
        .collect();
    out.push(
        Finding::new(Symptom::RankStraggler, Severity::Warn, "data_wait", 1.0)
            .summary(format!(
                "rank {} waits {:.3} s per step for its data loader ({:.0}% of its {:.3} s \
                 step), against {}: its data is slower, and every rank waits for it at the \
                 gradient all-reduce",
                most.0,
                most.1,
                100.0 * most.1 / most.2.max(1e-12),
                most.2,
                others.join(", ")
            ))
            .number("slowest_wait_s", most.1)
            .number("fastest_wait_s", least.1)
            .number("slowest_step_s", most.2)
            .ranks([most.0]),
    );
}
