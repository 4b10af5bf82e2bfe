//! What the data loaders yield: rows shared between training and evaluation, the same order
//! every epoch, duplicate batches, inputs far from normalised, skewed classes, and a loop that
//! waits on its loader.

use super::pct;
use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;

/// Shared rows at this share of the other split or more fail; fewer warn (a natural data set
/// holds a few exact duplicates).
const OVERLAP_FAIL: f64 = 0.01;
/// Float inputs whose maximum exceeds this while their minimum is at least 0 look like raw
/// pixel values (0–255) …
const RAW_MAX: f64 = 20.0;
/// … and inputs whose mean or standard deviation exceeds this in size are far from O(1).
const FAR_FROM_UNIT: f64 = 10.0;
/// The largest class this many times the smallest is skewed (the class-balance check's bound).
const IMBALANCE: f64 = 10.0;
/// Class counts over fewer targets say nothing.
const MIN_TARGETS: u64 = 100;
/// A loop waiting this share of its step time or more on the loader is input-bound …
const WAIT_SHARE: f64 = 0.5;
/// … once the first steps (worker start-up) are left out, and over at least this many steps.
const WAIT_SKIP: usize = 3;
const WAIT_MIN_STEPS: usize = 5;

pub(super) fn judge(p: &Process, out: &mut Vec<Finding>) {
    overlap(p, out);
    order(p, out);
    duplicates(p, out);
    inputs(p, out);
    classes(p, out);
    waiting(p, out);
}

fn loader_site(p: &Process, loader: u32) -> Option<String> {
    p.loaders
        .iter()
        .find(|l| l.loader == loader)
        .and_then(|l| l.location.clone())
}

fn overlap(p: &Process, out: &mut Vec<Finding>) {
    for o in &p.overlaps {
        if o.shared_rows == 0 || o.other_rows == 0 {
            continue;
        }
        let share = o.shared_rows as f64 / o.other_rows as f64;
        let severity = if share >= OVERLAP_FAIL {
            Severity::Fail
        } else {
            Severity::Warn
        };
        out.push(
            Finding::new(Symptom::TrainEvalOverlap, severity, "data", 0.0)
                .summary(format!(
                    "{} of the {} rows of another loader's data set ({}) are also training rows: \
                     its scores measure memory, not generalisation{}",
                    o.shared_rows,
                    o.other_rows,
                    pct(share),
                    if o.complete {
                        ""
                    } else {
                        " (first rows compared only)"
                    }
                ))
                .number("shared_rows", o.shared_rows as f64)
                .number("other_rows", o.other_rows as f64)
                .number("train_rows", o.train_rows as f64)
                .at(loader_site(p, o.other_loader)),
        );
    }
}

fn order(p: &Process, out: &mut Vec<Finding>) {
    let mut loaders: Vec<u32> = p.epochs.iter().map(|e| e.loader).collect();
    loaders.sort_unstable();
    loaders.dedup();
    for id in loaders {
        let epochs: Vec<_> = p
            .epochs
            .iter()
            .filter(|e| e.loader == id && e.role == "train" && e.order.is_some() && e.batches > 1)
            .collect();
        let Some(pair) = epochs.windows(2).find(|w| w[0].order == w[1].order) else {
            continue;
        };
        let loader = p.loaders.iter().find(|l| l.loader == id);
        let why = match loader {
            Some(l) if l.distributed == Some(true) => {
                "a DistributedSampler whose set_epoch(epoch) is never called repeats its order"
            }
            Some(l) if l.shuffle == Some(false) => "the loader does not shuffle (shuffle=False)",
            _ => "the sampler repeats its order",
        };
        out.push(
            Finding::new(
                Symptom::SameOrderEveryEpoch,
                Severity::Warn,
                "data",
                pair[1].epoch as f64,
            )
            .summary(format!(
                "the training loader yielded the same order in epochs {} and {}: {why}",
                pair[0].epoch, pair[1].epoch
            ))
            .number("epoch", pair[1].epoch as f64)
            .at(loader_site(p, id)),
        );
    }
}

fn duplicates(p: &Process, out: &mut Vec<Finding>) {
    let Some(e) = p
        .epochs
        .iter()
        .filter(|e| e.role != "eval")
        .find(|e| e.duplicate_batches > 0)
    else {
        return;
    };
    out.push(
        Finding::new(
            Symptom::DuplicateBatches,
            Severity::Warn,
            "data",
            e.epoch as f64,
        )
        .summary(format!(
            "{} of {} batches in epoch {} repeat an earlier batch of the same epoch: workers \
                 or the sampler yield the same data twice",
            e.duplicate_batches, e.batches, e.epoch
        ))
        .number("duplicate_batches", e.duplicate_batches as f64)
        .number("batches", e.batches as f64)
        .at(loader_site(p, e.loader)),
    );
}

fn inputs(p: &Process, out: &mut Vec<Finding>) {
    let Some((e, s)) = p
        .epochs
        .iter()
        .filter(|e| e.role == "train")
        .find_map(|e| e.input.as_ref().map(|s| (e, s)))
    else {
        return;
    };
    let (mean, std, min, max) = (
        s.mean.unwrap_or(0.0),
        s.std.unwrap_or(1.0),
        s.min.unwrap_or(0.0),
        s.max.unwrap_or(0.0),
    );
    let raw = min >= 0.0 && max > RAW_MAX;
    let far = mean.abs() > FAR_FROM_UNIT || std > FAR_FROM_UNIT;
    if !(raw || far) || !(mean.is_finite() && std.is_finite()) {
        return;
    }
    out.push(
        Finding::new(Symptom::InputsNotNormalised, Severity::Warn, "data", 1.0)
            .summary(format!(
                "the training inputs are far from normalised (mean {mean:.3}, std {std:.3}, range \
                 {min:.3} to {max:.3}): scale them to mean 0 and unit variance"
            ))
            .number("mean", mean)
            .number("std", std)
            .number("min", min)
            .number("max", max)
            .at(loader_site(p, e.loader)),
    );
}

fn classes(p: &Process, out: &mut Vec<Finding>) {
    let Some((e, counts)) = p
        .epochs
        .iter()
        .filter(|e| e.role == "train")
        .find_map(|e| e.classes.as_ref().map(|c| (e, c)))
    else {
        return;
    };
    let total: u64 = counts.values().sum();
    let (Some(max), Some(min)) = (counts.values().max(), counts.values().min()) else {
        return;
    };
    if counts.len() < 2 || total < MIN_TARGETS || (*max as f64) < IMBALANCE * (*min).max(1) as f64 {
        return;
    }
    out.push(
        Finding::new(
            Symptom::ClassImbalance,
            Severity::Warn,
            "data",
            e.epoch as f64,
        )
        .summary(format!(
            "the training loader yields its most frequent class {:.0} times as often as its \
                 rarest ({max} vs {min} of {total}): a model can score well predicting the common \
                 class",
            *max as f64 / (*min).max(1) as f64
        ))
        .number("largest", *max as f64)
        .number("smallest", *min as f64)
        .number("classes", counts.len() as f64)
        .at(loader_site(p, e.loader)),
    );
}

fn waiting(p: &Process, out: &mut Vec<Finding>) {
    let steps: Vec<_> = p
        .steps
        .iter()
        .skip(WAIT_SKIP)
        .filter(|s| s.step_s.is_some() && s.data_wait_s.is_some())
        .collect();
    if steps.len() < WAIT_MIN_STEPS {
        return;
    }
    let wait: f64 = steps.iter().filter_map(|s| s.data_wait_s).sum();
    let total: f64 = steps.iter().filter_map(|s| s.step_s).sum();
    if total <= 0.0 || wait < WAIT_SHARE * total {
        return;
    }
    let site = p.loaders.first().and_then(|l| l.location.clone());
    out.push(
        Finding::new(
            Symptom::DataWait,
            Severity::Warn,
            "data",
            steps[0].step as f64,
        )
        .summary(format!(
            "the loop spends {} of each step waiting for the data loader ({:.3} s of {:.3} s \
                 per step): the input pipeline, not the model, sets the speed (more workers, \
                 pin_memory, lighter transforms)",
            pct(wait / total),
            wait / steps.len() as f64,
            total / steps.len() as f64
        ))
        .number("wait_share", wait / total)
        .number("steps", steps.len() as f64)
        .at(site),
    );
}
