//! Across ranks, within one epoch: samples that several ranks read, and samples that no rank
//! reads. Each rank's `epoch` record carries a sample of its distinct row fingerprints chosen
//! by value (TRACE.md), so every rank samples the same rows; the comparison needs no
//! collective. A `DistributedSampler` that pads its ranks to equal length repeats at most
//! `world_size - 1` samples, and one with `drop_last` leaves at most that many out (a
//! launcher's own sharding may repeat whole batches); a loader's own `drop_last` leaves out
//! less than a batch per rank. Rows that are equal in the dataset
//! itself look the same to a fingerprint: each rank's duplicates within the epoch show how
//! many such rows there are, and they are allowed for.

use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;
use crate::trace::records::Epoch;
use std::collections::BTreeMap;

/// Rows equal in the dataset land on two ranks about `world_size - 1` times as often as on one
/// (where each rank's `duplicate_rows` counts them), and hide about `world_size` times as many
/// rows from the count of distinct ones; twice those is allowed.
const DUPLICATE_ALLOWANCE: f64 = 2.0;
/// From a sample (not every row fingerprinted): the estimated excess must reach this share of
/// the epoch's rows …
const SAMPLED_SHARE_MIN: f64 = 0.01;
/// … and rest on at least this many sampled rows (one or two are noise of the estimate).
const SAMPLED_EVIDENCE_MIN: u64 = 3;

/// What one epoch of one loader looked like across the ranks.
struct Compared {
    loader: u32,
    epoch: u64,
    /// Rows read by more than one rank (a row on k ranks counts k - 1), estimated.
    shared: f64,
    /// Rows of the dataset no rank read, estimated; `None` without a known length.
    unseen: Option<f64>,
    length: Option<u64>,
    rows: u64,
    /// Whether `shared` (and so `unseen`) is an estimate from a sample.
    sampled: bool,
    /// The sampled rows behind `shared`.
    evidence: u64,
}

pub(super) fn judge(ranked: &[&Process], out: &mut Vec<Finding>) {
    if out.iter().any(|f| f.symptom == Symptom::RanksSameData) {
        return; // identical batches on every rank: that finding says it already
    }
    let world = ranked.len() as f64;
    let mut compared = 0usize;
    let mut first: Option<(Compared, f64, f64, f64)> = None;
    for (loader, epoch) in train_epochs(ranked[0]) {
        let Some(epochs) = ranked
            .iter()
            .map(|p| {
                p.epochs
                    .iter()
                    .find(|e| e.loader == loader && e.epoch == epoch)
            })
            .collect::<Option<Vec<&Epoch>>>()
        else {
            continue;
        };
        let Some(c) = compare(ranked[0], loader, epoch, &epochs) else {
            continue;
        };
        compared += 1;
        let duplicates: u64 = epochs.iter().map(|e| e.duplicate_rows).sum();
        let natural = DUPLICATE_ALLOWANCE * duplicates as f64;
        let even = evened_out(ranked[0], loader, world);
        let shared_allowed = even + natural * (world - 1.0);
        let unseen_allowed = even + natural * world + dropped_by_loader(ranked[0], loader, world);
        if first.is_none()
            && (excess(&c, c.shared, shared_allowed)
                || c.unseen.is_some_and(|u| excess(&c, u, unseen_allowed)))
        {
            let step = epochs[0].step.unwrap_or(1) as f64;
            first = Some((c, shared_allowed, unseen_allowed, step));
        }
    }
    let Some((c, shared_allowed, unseen_allowed, step)) = first else {
        return;
    };
    out.push(finding(
        ranked,
        &c,
        (compared, step),
        shared_allowed,
        unseen_allowed,
    ));
}

/// (loader, epoch) of rank 0's training epochs whose iterator was exhausted.
fn train_epochs(p: &Process) -> Vec<(u32, u64)> {
    p.epochs
        .iter()
        .filter(|e| e.role == "train" && e.exhausted == Some(true))
        .map(|e| (e.loader, e.epoch))
        .collect()
}

/// The ranks' samples of one epoch compared, when every rank exhausted it and fingerprinted
/// every row it read.
fn compare(p0: &Process, loader: u32, epoch: u64, epochs: &[&Epoch]) -> Option<Compared> {
    if epochs.iter().any(|e| {
        e.exhausted != Some(true) || e.row_sample.is_none() || e.rows_fingerprinted < e.rows
    }) {
        return None;
    }
    let bits = epochs
        .iter()
        .map(|e| e.row_sample_bits.unwrap_or(0))
        .max()?
        .min(32);
    let mut on_ranks: BTreeMap<&str, u64> = BTreeMap::new();
    for e in epochs {
        for d in e.row_sample.iter().flatten() {
            if kept(d, bits) {
                *on_ranks.entry(d.as_str()).or_default() += 1;
            }
        }
    }
    let scale = 2f64.powi(bits as i32);
    let shared_sampled: u64 = on_ranks.values().map(|k| k - 1).sum();
    // Distinct rows read: every row read, less each rank's repeats and the rows shared across
    // ranks. Only the last is estimated, so a correct split (nothing shared) counts exactly.
    let shared = shared_sampled as f64 * scale;
    let repeats: u64 = epochs.iter().map(|e| e.duplicate_rows).sum();
    let rows: u64 = epochs.iter().map(|e| e.rows).sum();
    let distinct = rows as f64 - repeats as f64 - shared;
    let length = p0
        .loaders
        .iter()
        .find(|l| l.loader == loader)
        .and_then(|l| l.length);
    let unseen = length.map(|n| (n as f64 - distinct).max(0.0));
    Some(Compared {
        loader,
        epoch,
        shared,
        unseen,
        length,
        rows,
        sampled: bits > 0 && shared_sampled > 0,
        evidence: shared_sampled,
    })
}

/// Whether a fingerprint (16 hex digits) is in the sample of `bits` leading zero bits.
fn kept(digest: &str, bits: u32) -> bool {
    if bits == 0 {
        return true;
    }
    digest
        .get(..8)
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .is_some_and(|v| (v as u64) >> (32 - bits) == 0)
}

/// Rows a sharding sampler may repeat (or leave out) to give every rank as many: fewer than
/// one per rank for a `DistributedSampler`; for another (a launcher's batch sampler, such as
/// accelerate's, that repeats whole batches from the start), fewer than a batch per rank.
fn evened_out(p0: &Process, loader: u32, world: f64) -> f64 {
    let l = p0.loaders.iter().find(|l| l.loader == loader);
    if l.is_some_and(|l| l.distributed == Some(true)) {
        return world - 1.0;
    }
    let batch = l.and_then(|l| l.batch_size).unwrap_or(1) as f64;
    (world - 1.0) * (batch + 1.0)
}

/// Rows a loader's own `drop_last` may leave out in an epoch: less than a batch per rank.
fn dropped_by_loader(p0: &Process, loader: u32, world: f64) -> f64 {
    p0.loaders
        .iter()
        .find(|l| l.loader == loader && l.drop_last == Some(true))
        .and_then(|l| l.batch_size)
        .map_or(0.0, |b| world * b.saturating_sub(1) as f64)
}

/// Whether `value` exceeds what is allowed: any excess when every row was compared; from a
/// sample, an excess of SAMPLED_SHARE_MIN of the rows resting on enough sampled rows.
fn excess(c: &Compared, value: f64, allowed: f64) -> bool {
    if !c.sampled {
        return value > allowed;
    }
    value - allowed >= SAMPLED_SHARE_MIN * c.rows as f64 && c.evidence >= SAMPLED_EVIDENCE_MIN
}

fn finding(
    ranked: &[&Process],
    c: &Compared,
    (compared, step): (usize, f64),
    shared_allowed: f64,
    unseen_allowed: f64,
) -> Finding {
    let about = if c.sampled { "about " } else { "" };
    let mut parts = Vec::new();
    if c.shared > shared_allowed {
        parts.push(format!(
            "{about}{:.0} of the {} rows the ranks read were read by more than one rank",
            c.shared, c.rows
        ));
    }
    if let (Some(u), Some(n)) = (c.unseen, c.length) {
        if u > unseen_allowed {
            parts.push(format!("{about}{u:.0} of the dataset's {n} rows by none"));
        }
    }
    let location = ranked[0]
        .loaders
        .iter()
        .find(|l| l.loader == c.loader)
        .and_then(|l| l.location.clone());
    Finding::new(Symptom::RanksSamplesOverlap, Severity::Fail, "data", step)
        .summary(format!(
            "in epoch {} of loader {}, {}: the ranks' shares of the data are not a split (a \
         sampler shuffled differently on each rank, such as a DistributedSampler seeded per \
         rank, or a hand-made split whose bounds overlap or leave gaps)",
            c.epoch,
            c.loader,
            parts.join(", and ")
        ))
        .number("shared_rows", c.shared)
        .number("unseen_rows", c.unseen.unwrap_or(f64::NAN))
        .number("dataset_rows", c.length.map_or(f64::NAN, |n| n as f64))
        .number("epochs_compared", compared as f64)
        .ranks(ranked.iter().map(|p| p.rank()))
        .at(location)
}
