//! The cross-rank findings added to the trace judgement: samples shared or skipped across
//! ranks within an epoch, BatchNorm statistics that differ across ranks, and a rank that waits
//! far longer for its data.

use super::judge;
use super::test_support::{clean, processes, rank, set};
use crate::finding::{Finding, Severity, Symptom};
use serde_json::{json, Value};

/// A well-mixed 64-bit value of `i` (splitmix64): row fingerprints spread over the whole range,
/// as blake2b's are.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The fingerprint of dataset row `i`.
fn row(i: u64) -> String {
    format!("{:016x}", mix(i))
}

/// What the Python side writes for one epoch: distinct rows, duplicates, the sample of
/// fingerprints whose first `bits` bits are zero.
fn epoch(rows: &[u64], bits: u32) -> Value {
    let mut distinct: Vec<u64> = rows.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let sample: Vec<String> = distinct
        .iter()
        .map(|&i| row(i))
        .filter(|d| bits == 0 || u32::from_str_radix(&d[..8], 16).unwrap() >> (32 - bits) == 0)
        .collect();
    json!({"kind": "epoch", "step": 9, "loader": 0, "epoch": 0, "role": "train",
           "batches": 10, "rows": rows.len(), "order": "o", "rows_fingerprinted": rows.len(),
           "duplicate_rows": rows.len() - distinct.len(), "duplicate_batches": 0,
           "exhausted": true, "row_sample": sample, "row_sample_bits": bits})
}

/// Two DDP ranks whose epoch 0 read `shard(rank)` (dataset row indices) from a dataset of
/// `length` rows; the loader's `drop_last` and batch size as given.
fn ranks_reading(
    length: u64,
    bits: u32,
    loader: Value,
    shard: impl Fn(u32) -> Vec<u64>,
) -> Vec<Value> {
    let mut all = Vec::new();
    for r in 0..2 {
        let mut recs = rank(clean(8), r, 2);
        set(
            &mut recs,
            "model",
            |_| true,
            "wrapper",
            json!("DistributedDataParallel"),
        );
        for s in recs.iter_mut().filter(|x| x["kind"] == "step") {
            s["batch"] = json!(format!("r{r}-{}", s["step"]));
        }
        for l in recs.iter_mut().filter(|x| x["kind"] == "loader") {
            l["length"] = json!(length);
            l["distributed"] = json!(true);
            for (k, v) in loader.as_object().unwrap() {
                l[k.as_str()] = v.clone();
            }
        }
        recs.retain(|x| x["kind"] != "epoch");
        let end = recs.pop().unwrap();
        recs.push(epoch(&shard(r), bits));
        recs.push(end);
        all.extend(recs);
    }
    all
}

fn findings(records: &[Value]) -> Vec<Finding> {
    judge(&processes(records)).findings
}

fn has(records: &[Value], symptom: Symptom, severity: Severity) -> bool {
    findings(records)
        .iter()
        .any(|f| f.symptom == symptom && f.severity == severity)
}

/// A permutation of 0..n drawn from `seed` (sorting by a hash of index and seed).
fn perm(n: u64, seed: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n).collect();
    v.sort_by_key(|&i| mix(i ^ (seed << 40)));
    v
}

/// DistributedSampler's split of a permutation: padded to a multiple of 2 (drop_last false)
/// or cut to one (true), then every second index from the rank's own.
fn split(p: &[u64], r: u32, drop_last: bool) -> Vec<u64> {
    let mut p = p.to_vec();
    if drop_last {
        p.truncate(p.len() / 2 * 2);
    } else if p.len() % 2 == 1 {
        p.push(p[0]);
    }
    p.into_iter().skip(r as usize).step_by(2).collect()
}

#[test]
fn a_correct_distributed_split_has_no_finding_padded_cut_or_sampled() {
    // Four shuffles of the small datasets, two of the large ones (each a second in a debug
    // build): the sampled path's rows are chosen by value, so a shuffle changes little there.
    for (n, bits, seeds) in [(320, 0, 4), (321, 0, 4), (200_000, 7, 2), (200_001, 7, 2)] {
        for (seed, drop_last) in (1..=seeds).flat_map(|s| [(s, false), (s, true)]) {
            let p = perm(n, seed);
            let recs = ranks_reading(n, bits, json!({}), |r| split(&p, r, drop_last));
            let found = findings(&recs);
            assert!(
                found.is_empty(),
                "n {n} seed {seed} drop_last {drop_last}: {found:?}"
            );
        }
    }
    // The loader's own drop_last leaves out less than a batch per rank.
    let p = perm(330, 2);
    let recs = ranks_reading(330, 0, json!({"drop_last": true, "batch_size": 16}), |r| {
        split(&p, r, false)[..160].to_vec()
    });
    assert!(findings(&recs).is_empty());
    // A launcher's sharding (not a DistributedSampler) that evens ranks out with the first
    // batch again: 16 rows on both ranks, allowed; 18 are not.
    let even = |extra: u64| {
        ranks_reading(
            304,
            0,
            json!({"distributed": false, "batch_size": 16}),
            move |r| {
                if r == 0 {
                    (0..160).collect()
                } else {
                    (160 - extra..304).collect()
                }
            },
        )
    };
    assert!(findings(&even(16)).is_empty(), "{:?}", findings(&even(16)));
    assert!(has(&even(18), Symptom::RanksSamplesOverlap, Severity::Fail));
}

#[test]
fn a_sampler_shuffled_per_rank_shares_and_skips_rows() {
    for (n, bits) in [(320, 0), (200_000, 7)] {
        let recs = ranks_reading(n, bits, json!({}), |r| {
            split(&perm(n, r as u64 + 1), r, false)
        });
        let found = findings(&recs);
        let f = found
            .iter()
            .find(|f| f.symptom == Symptom::RanksSamplesOverlap)
            .unwrap_or_else(|| panic!("n {n}: {found:?}"));
        assert_eq!(f.severity, Severity::Fail);
        let shared = f.numbers.iter().find(|x| x.0 == "shared_rows").unwrap().1;
        let unseen = f.numbers.iter().find(|x| x.0 == "unseen_rows").unwrap().1;
        // About a quarter of the rows each: held to a wide bound.
        for x in [shared, unseen] {
            assert!(x > 0.15 * n as f64 && x < 0.35 * n as f64, "n {n}: {x}");
        }
        assert!(f.summary.contains("by none"), "{}", f.summary);
        assert_eq!(f.ranks, [0, 1]);
    }
}

#[test]
fn a_hand_made_split_off_by_one_is_found_either_way() {
    // Bounds that leave gaps: rows 158, 159, 318, 319 are never read.
    let gaps = ranks_reading(320, 0, json!({}), |r| {
        (r as u64 * 160..r as u64 * 160 + 158).collect()
    });
    assert!(has(&gaps, Symptom::RanksSamplesOverlap, Severity::Fail));
    // Bounds that overlap: rows 158..162 on both ranks.
    let overlap = ranks_reading(320, 0, json!({}), |r| {
        if r == 0 {
            (0..162).collect()
        } else {
            (158..320).collect()
        }
    });
    let found = findings(&overlap);
    let f = found
        .iter()
        .find(|f| f.symptom == Symptom::RanksSamplesOverlap)
        .unwrap();
    assert!(f.summary.contains("4 of the 324 rows"), "{}", f.summary);
}

#[test]
fn rows_equal_in_the_dataset_itself_are_allowed_for() {
    // Rows 0..40 repeat as rows 40..80 (equal items): a correct split puts some pairs on one
    // rank (duplicates within it) and some across.
    let p = perm(320, 3);
    let recs = ranks_reading(320, 0, json!({}), |r| {
        split(&p, r, false)
            .into_iter()
            .map(|i| if (40..80).contains(&i) { i - 40 } else { i })
            .collect()
    });
    assert!(findings(&recs).is_empty(), "{:?}", findings(&recs));
}

#[test]
fn epochs_not_exhausted_or_without_samples_are_not_compared() {
    let p = perm(320, 1);
    let mut recs = ranks_reading(320, 0, json!({}), |r| {
        split(&perm(320, r as u64 + 1), r, false)
    });
    set(&mut recs, "epoch", |_| true, "exhausted", json!(false));
    assert!(findings(&recs).is_empty());
    let mut recs = ranks_reading(320, 0, json!({}), |r| {
        split(&perm(320, r as u64 + 1), r, false)
    });
    set(&mut recs, "epoch", |_| true, "row_sample", Value::Null);
    assert!(findings(&recs).is_empty());
    // Identical batches on every rank: ranks-same-data says it, not this.
    let mut same = ranks_reading(320, 0, json!({}), |_| p[..160].to_vec());
    for s in same.iter_mut().filter(|x| x["kind"] == "step") {
        s["batch"] = json!(format!("same-{}", s["step"]));
    }
    let found = findings(&same);
    assert!(found.iter().any(|f| f.symptom == Symptom::RanksSameData));
    assert!(!found
        .iter()
        .any(|f| f.symptom == Symptom::RanksSamplesOverlap));
}

/// Two DDP ranks with `batchnorm` records on steps 1..=3: module `bn1` of `class`, whose sums
/// on rank r are `sums(r)`.
fn with_batchnorm(class: &str, sums: impl Fn(u32) -> (f64, f64)) -> Vec<Value> {
    let mut out = Vec::new();
    let mut r = 0;
    for v in ranks_reading(320, 0, json!({}), |r| split(&perm(320, 1), r, false)) {
        if v["kind"] == "start" {
            r = v["rank"].as_u64().unwrap() as u32;
        }
        if v["kind"] == "end" {
            let (mean, var) = sums(r);
            for step in 1..=3 {
                out.push(
                    json!({"kind": "batchnorm", "step": step, "model": 0, "count": 2,
                    "modules": [
                        {"name": "bn0", "class": class, "mean_sum": 1.5, "var_sum": 16.0},
                        {"name": "bn1", "class": class, "mean_sum": mean, "var_sum": var}]}),
                );
            }
        }
        out.push(v);
    }
    out
}

#[test]
fn batchnorm_statistics_apart_across_ranks_warn_and_synced_ones_do_not() {
    let plain = with_batchnorm("BatchNorm2d", |r| (0.2 + 0.05 * r as f64, 15.0 + r as f64));
    let found = findings(&plain);
    let f = found
        .iter()
        .find(|f| f.symptom == Symptom::BatchnormNotSynced)
        .unwrap_or_else(|| panic!("{found:?}"));
    assert_eq!(f.severity, Severity::Warn);
    assert!(f.summary.contains("1 of 2 modules (`bn1`"), "{}", f.summary);
    assert!(f.summary.contains("6.2%"), "{}", f.summary);
    let synced = with_batchnorm("SyncBatchNorm", |r| {
        (0.2 + 0.05 * r as f64, 15.0 + r as f64)
    });
    assert!(findings(&synced).is_empty());
    let equal = with_batchnorm("BatchNorm2d", |_| (0.2, 15.0));
    assert!(findings(&equal).is_empty());
}

fn waiting(rank1_wait: f64) -> Vec<Value> {
    let mut recs = ranks_reading(320, 0, json!({}), |r| split(&perm(320, 1), r, false));
    let mut r = 0;
    for v in recs.iter_mut() {
        if v["kind"] == "start" {
            r = v["rank"].as_u64().unwrap();
        }
        if v["kind"] == "step" {
            // Every rank's step lasts as long: the others wait for rank 1 at the all-reduce.
            v["step_s"] = json!(0.25);
            v["data_wait_s"] = json!(if r == 1 { rank1_wait } else { 0.004 });
        }
    }
    recs
}

#[test]
fn a_rank_waiting_far_longer_for_its_data_is_a_straggler() {
    let found = findings(&waiting(0.2));
    let f = found
        .iter()
        .find(|f| f.symptom == Symptom::RankStraggler && f.metric == "data_wait")
        .unwrap_or_else(|| panic!("{found:?}"));
    assert_eq!((f.severity, f.ranks.clone()), (Severity::Warn, vec![1]));
    assert!(f.summary.contains("rank 1 waits 0.200 s"), "{}", f.summary);
    assert!(f.summary.contains("rank 0 0.004 s"), "{}", f.summary);
    // Twice as long but a small part of the step, or alike: nothing.
    for wait in [0.012, 0.005] {
        let found = findings(&waiting(wait));
        assert!(
            !found.iter().any(|f| f.symptom == Symptom::RankStraggler),
            "{wait}: {found:?}"
        );
    }
}

/// Two DDP ranks of 16 steps drawing their batches themselves (no DataLoader) from one
/// sequence: rank 0 drew `ahead` batches more before its first step (an evaluation of its
/// own), so its batch at step s is rank 1's at step s + `ahead`; `apart` gives rank 1 draws
/// of its own instead.
fn drawn_by_hand(ahead: u64, apart: bool) -> Vec<Value> {
    let mut all = Vec::new();
    for r in 0..2u32 {
        let mut recs = rank(clean(16), r, 2);
        recs.retain(|v| v["kind"] != "loader" && v["kind"] != "epoch");
        for s in recs.iter_mut().filter(|x| x["kind"] == "step") {
            let step = s["step"].as_u64().unwrap();
            let draw = if r == 0 { step + ahead } else { step };
            s["batch"] = json!(if apart && r == 1 {
                format!("other-{draw}")
            } else {
                format!("draw-{draw}")
            });
        }
        all.extend(recs);
    }
    all
}

#[test]
fn ranks_drawing_one_sequence_a_few_steps_apart_are_on_the_same_data() {
    let found = findings(&drawn_by_hand(4, false));
    let f = found
        .iter()
        .find(|f| f.symptom == Symptom::RanksSameData)
        .unwrap_or_else(|| panic!("{found:?}"));
    assert_eq!((f.severity, f.ranks.clone()), (Severity::Fail, vec![0, 1]));
    // Rank 0's draws 5..=20 against rank 1's 1..=16: 12 of 16 shared, 4 steps later.
    let number = |name: &str| f.numbers.iter().find(|n| n.0 == name).map(|n| n.1);
    assert_eq!(number("batches_shared"), Some(12.0), "{f:?}");
    assert_eq!(number("batches_compared"), Some(16.0), "{f:?}");
    assert_eq!(number("offset_steps"), Some(4.0), "{f:?}");
    assert!(f.summary.contains("4 step(s) later"), "{}", f.summary);
    assert!(f.summary.contains("seeded alike"), "{}", f.summary);
    assert!(
        f.summary.contains("evaluation on rank 0 alone"),
        "{}",
        f.summary
    );
    // The same batches at the same steps.
    let same = findings(&drawn_by_hand(0, false));
    let f = same
        .iter()
        .find(|f| f.symptom == Symptom::RanksSameData)
        .unwrap_or_else(|| panic!("{same:?}"));
    assert!(f.summary.contains("at the same steps"), "{}", f.summary);
    // Each rank its own draws (seeded apart): nothing.
    let apart = findings(&drawn_by_hand(4, true));
    assert!(
        !apart.iter().any(|f| f.symptom == Symptom::RanksSameData),
        "{apart:?}"
    );
}
