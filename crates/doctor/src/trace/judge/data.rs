//! What the data loaders yield: rows shared between training and evaluation, the same order
//! every epoch, duplicate batches, inputs far from normalised, skewed classes, and a loop that
//! waits on its loader.

use super::pct;
use crate::finding::{Finding, Severity, Symptom};
use crate::trace::read::Process;
use crate::trace::records::Overlap;

/// Rows equal by content (not shared by construction) at this share of the other split or
/// more warn; fewer are information (a natural data set holds a few exact duplicates, and a
/// small input space many).
const CONTENT_WARN: f64 = 0.10;
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
/// … once the first steps (worker start-up) are left out, and over at least this many steps …
const WAIT_SKIP: usize = 3;
const WAIT_MIN_STEPS: usize = 5;
/// … and only when the mean wait is at least this many seconds a step. Below it the wait is
/// the fixed cost of fetching any batch (a hop through the workers' queue, collation, a copy
/// into the step's tensors: about a millisecond), which no loader setting removes: a toy step
/// of 3 ms that waits 2 ms for its batch has nothing to gain.
const WAIT_FLOOR_S: f64 = 0.010;

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

/// `train-eval-overlap`. Invariant: an evaluation split shares no row with training by
/// construction (indices into, or the storage of, the training dataset). Exceptions the
/// trace tells apart: the training split itself evaluated on purpose (the same dataset, or
/// exactly its rows: accuracy on the training split), information; rows that are merely
/// equal by content (a small input space, duplicates in the source), a data-quality fact:
/// counted, a warning when their share is large, never a fail. Where the trace cannot tell
/// how the splits were made, content is all it has, so it warns at most.
///
/// A loader whose rows are all training rows, but not all of them, is a sample of the
/// training split. Beside a loader that reads rows held out from training it is accuracy on
/// a sample of the training split (information); with no held-out loader it is that, or a
/// validation split cut from the rows the model still trains on: the trace holds no intent,
/// so it warns. A split only part of whose rows are training rows (two permutations, a
/// validation set drawn afresh from the whole dataset) is no sample of anything: a fail.
fn overlap(p: &Process, out: &mut Vec<Finding>) {
    for o in &p.overlaps {
        if o.other_rows == 0 {
            continue;
        }
        let finding = if o.same_dataset || o.same_rows {
            train_split_evaluated(o)
        } else if o.within_train && o.construction_rows.is_some_and(|r| r > 0) {
            train_sample_evaluated(o, held_out_beside(p, o))
        } else if let Some(rows) = o.construction_rows.filter(|r| *r > 0) {
            overlap_by_construction(o, rows)
        } else if o.shared_rows > 0 {
            overlap_by_content(o)
        } else {
            continue;
        };
        out.push(
            finding
                .number("shared_rows", o.shared_rows as f64)
                .number("other_rows", o.other_rows as f64)
                .number("train_rows", o.train_rows as f64)
                .at(loader_site(p, o.other_loader)),
        );
    }
}

fn first_rows_only(o: &Overlap) -> &'static str {
    if o.complete {
        ""
    } else {
        " (first rows compared only)"
    }
}

fn train_split_evaluated(o: &Overlap) -> Finding {
    Finding::new(Symptom::TrainEvalOverlap, Severity::Info, "data", 0.0).summary(format!(
        "another loader evaluates the training split itself ({} rows, {}): accuracy on the \
         training split, not a held-out score",
        o.other_rows,
        if o.same_dataset {
            "the same dataset object"
        } else {
            "exactly the training rows"
        }
    ))
}

/// Whether another loader compared with the same training loader reads rows held out from
/// training: none of its rows a training row by construction (disjoint indices or storage,
/// or a dataset built apart), and not every row equal to a training row by content.
fn held_out_beside(p: &Process, o: &Overlap) -> bool {
    p.overlaps.iter().any(|x| {
        x.train_loader == o.train_loader
            && x.other_loader != o.other_loader
            && x.other_rows > 0
            && !(x.same_dataset || x.same_rows || x.within_train)
            && x.construction_rows.unwrap_or(0) == 0
            && x.shared_rows < x.other_rows
    })
}

fn train_sample_evaluated(o: &Overlap, held_out: bool) -> Finding {
    let rows = o.construction_rows.unwrap_or(o.other_rows);
    let summary = if held_out {
        format!(
            "another loader evaluates a sample of the training split ({rows} of its rows, by \
             construction) beside a loader whose rows are held out from training: accuracy on \
             training rows, not a held-out score"
        )
    } else {
        format!(
            "every row another loader reads is a training row by construction ({rows} of the \
             training split's rows) and no loader reads rows held out from training: accuracy \
             on a sample of the training split, or a validation split cut from rows the model \
             still trains on, whose scores then measure memory; the trace cannot tell which"
        )
    };
    let severity = if held_out {
        Severity::Info
    } else {
        Severity::Warn
    };
    Finding::new(Symptom::TrainEvalOverlap, severity, "data", 0.0)
        .summary(summary)
        .number("construction_rows", rows as f64)
}

fn overlap_by_construction(o: &Overlap, rows: u64) -> Finding {
    let share = (rows as f64 / o.other_rows as f64).min(1.0);
    let how = match o.construction.as_deref() {
        Some("storage") => "views of the same tensor rows",
        _ => "indices into the same dataset",
    };
    Finding::new(Symptom::TrainEvalOverlap, Severity::Fail, "data", 0.0)
        .summary(format!(
            "{rows} of the {} rows of another loader's data set ({}) are training rows by \
             construction ({how}): its scores measure memory, not generalisation",
            o.other_rows,
            pct(share),
        ))
        .number("construction_rows", rows as f64)
}

fn overlap_by_content(o: &Overlap) -> Finding {
    let share = o.shared_rows as f64 / o.other_rows as f64;
    let severity = if share >= CONTENT_WARN {
        Severity::Warn
    } else {
        Severity::Info
    };
    let made = if o.construction.is_some() {
        "the splits share no row by construction"
    } else {
        "how the splits were made is not visible"
    };
    Finding::new(Symptom::TrainEvalOverlap, severity, "data", 0.0).summary(format!(
        "{} of the {} rows of another loader's data set ({}) are equal to training rows{}; {made}: \
         duplicates by content (a small input space, repeated items in the source) make its \
         scores partly a measure of memory",
        o.shared_rows,
        o.other_rows,
        pct(share),
        first_rows_only(o)
    ))
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
    let per_step = wait / steps.len() as f64;
    if total <= 0.0 || wait < WAIT_SHARE * total || per_step < WAIT_FLOOR_S {
        return;
    }
    let loader = p.loaders.first();
    let workers = loader.and_then(|l| l.num_workers);
    // What fits the loader as it was set up: a loader with workers is not short of them by
    // default, and one without has an obvious first remedy.
    let why = match workers {
        Some(0) => "it prepares every batch inside the training process (num_workers=0): give it \
                worker processes, or do the per-sample work once ahead of time"
            .to_string(),
        Some(n) => format!(
            "its {n} worker process{} do not keep up: per-sample work (decoding, tokenising, \
                        augmenting) too heavy for them, slow storage, or too few workers for that work;              time one __getitem__, cache what repeats, then add workers",
            if n == 1 { "" } else { "es" }
        ),
        None => "more workers, pin_memory, lighter transforms".to_string(),
    };
    let mut finding = Finding::new(
        Symptom::DataWait,
        Severity::Warn,
        "data",
        steps[0].step as f64,
    )
    .summary(format!(
        "the loop spends {} of each step waiting for the data loader ({:.3} s of {:.3} s per \
         step): the input pipeline, not the model, sets the speed ({why})",
        pct(wait / total),
        per_step,
        total / steps.len() as f64
    ))
    .number("wait_share", wait / total)
    .number("wait_per_step_s", per_step)
    .number("steps", steps.len() as f64)
    .number("num_workers", workers.map_or(f64::NAN, |w| w as f64))
    .at(loader.and_then(|l| l.location.clone()));
    if workers.is_some_and(|w| w > 0) {
        finding = finding.rules_out("num_workers=0");
    }
    out.push(finding);
}
