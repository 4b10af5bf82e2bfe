//! The same run read twice: a file copied into a second folder, a run directory synced twice, a
//! glob that matches one file by two names. Counted twice it would be two seeds agreeing
//! perfectly, which shrinks the variance and can turn "likely better" into "better". Each
//! repeat is counted once, with a warning naming both places.
//!
//! Two records are the same run when everything read from them agrees to the bit (arm, seed,
//! task, config, final metrics, every logged point) and something besides the numbers says
//! they are one run:
//! - their files are byte-identical (a copy), or
//! - they log a curve of at least [`MIN_CURVE_POINTS`] points, identical to the bit (two
//!   trainings do not repeat a curve exactly unless they are one computation), or
//! - they carry the same name and the same seed.
//!
//! Two runs that merely end on the same value (an accuracy of 0.8 on 100 examples is common)
//! and log nothing else are different runs, and both count.

use super::record::RunRecord;
use super::warnings::Warning;
use std::collections::{BTreeSet, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;

/// Logged points (over all metrics) that make an identical history evidence of one run.
pub const MIN_CURVE_POINTS: usize = 2;
/// At most this many repeats are named one by one; the rest are counted.
const MAX_NAMED: usize = 5;

/// The indices of `records` that repeat an earlier record, and one warning naming them.
pub fn find(records: &[RunRecord]) -> (BTreeSet<usize>, Option<Warning>) {
    let mut buckets: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, r) in records.iter().enumerate() {
        buckets.entry(content_hash(r)).or_default().push(i);
    }
    let mut repeats: Vec<(usize, usize, &'static str)> = Vec::new();
    for members in buckets.values().filter(|m| m.len() > 1) {
        let mut firsts: Vec<usize> = Vec::new();
        'member: for &i in members {
            for &f in &firsts {
                if let Some(why) = same_run(&records[f], &records[i]) {
                    repeats.push((f, i, why));
                    continue 'member;
                }
            }
            firsts.push(i);
        }
    }
    repeats.sort_unstable();
    let dropped: BTreeSet<usize> = repeats.iter().map(|r| r.1).collect();
    if repeats.is_empty() {
        return (dropped, None);
    }
    let mut named: Vec<String> = repeats
        .iter()
        .take(MAX_NAMED)
        .map(|&(f, i, why)| {
            format!(
                "{} repeats {} ({why})",
                place(&records[i]),
                place(&records[f])
            )
        })
        .collect();
    if repeats.len() > MAX_NAMED {
        named.push(format!("and {} more", repeats.len() - MAX_NAMED));
    }
    let message = format!(
        "{} run(s) read twice, each counted once: {}. One run is one seed, however many copies of it are given.",
        repeats.len(),
        named.join("; ")
    );
    (dropped, Some(Warning::new("duplicate-run", message)))
}

fn place(r: &RunRecord) -> String {
    if r.place.is_empty() {
        r.source.display().to_string()
    } else {
        format!("{} ({})", r.source.display(), r.place)
    }
}

/// A hash of everything compared except the name and where the run was read from.
fn content_hash(r: &RunRecord) -> u64 {
    let mut h = DefaultHasher::new();
    (&r.group, &r.seed, &r.task).hash(&mut h);
    for (k, v) in &r.config {
        (k, v.to_string()).hash(&mut h);
    }
    for (k, v) in &r.metrics {
        (k, v.to_bits()).hash(&mut h);
    }
    for (k, pts) in &r.history {
        k.hash(&mut h);
        for (s, v) in pts {
            (s.to_bits(), v.to_bits()).hash(&mut h);
        }
    }
    h.finish()
}

/// Why `b` is a repeat of `a`, or `None` when they are two runs.
fn same_run(a: &RunRecord, b: &RunRecord) -> Option<&'static str> {
    let bits = |m: &std::collections::BTreeMap<String, f64>| {
        m.iter()
            .map(|(k, v)| (k.clone(), v.to_bits()))
            .collect::<Vec<_>>()
    };
    let curve_bits = |r: &RunRecord| {
        r.history
            .iter()
            .map(|(k, p)| {
                let pts: Vec<(u64, u64)> =
                    p.iter().map(|(s, v)| (s.to_bits(), v.to_bits())).collect();
                (k.clone(), pts)
            })
            .collect::<Vec<_>>()
    };
    let equal = a.group == b.group
        && a.seed == b.seed
        && a.task == b.task
        && a.config == b.config
        && bits(&a.metrics) == bits(&b.metrics)
        && curve_bits(a) == curve_bits(b);
    if !equal {
        return None;
    }
    if a.place == b.place && a.source == b.source {
        return Some("the same file, given twice");
    }
    if a.place == b.place && identical_files(&a.source, &b.source) {
        return Some("byte-identical files");
    }
    if a.history.values().map(Vec::len).sum::<usize>() >= MIN_CURVE_POINTS {
        return Some("the same logged curves, to the bit");
    }
    if a.name == b.name && a.seed.is_some() {
        return Some("the same name, seed, config and metrics");
    }
    None
}

/// Two regular files with the same bytes (sizes compared first). A file that cannot be read
/// now is not called identical.
fn identical_files(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    if !ma.is_file() || !mb.is_file() || ma.len() != mb.len() {
        return false;
    }
    match (std::fs::read(a), std::fs::read(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    fn rec(name: &str, seed: Option<&str>, value: f64, curve: &[f64]) -> RunRecord {
        RunRecord {
            name: name.into(),
            group: Some("a".into()),
            seed: seed.map(str::to_string),
            task: None,
            config: BTreeMap::new(),
            metrics: BTreeMap::from([("acc".to_string(), value)]),
            history: if curve.is_empty() {
                BTreeMap::new()
            } else {
                BTreeMap::from([(
                    "acc".to_string(),
                    curve
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (i as f64, *v))
                        .collect(),
                )])
            },
            source: PathBuf::from(format!("/nonexistent/{name}.json")),
            place: String::new(),
        }
    }

    #[test]
    fn the_same_curve_or_the_same_name_and_seed_is_one_run() {
        let rs = [
            rec("x", None, 0.8, &[0.5, 0.8]),
            rec("y", None, 0.8, &[0.5, 0.8]),
            rec("z", Some("1"), 0.7, &[]),
            rec("z", Some("1"), 0.7, &[]),
        ];
        let (dropped, w) = find(&rs);
        assert_eq!(dropped, BTreeSet::from([1, 3]));
        let w = w.unwrap();
        assert_eq!(w.id, "duplicate-run");
        assert!(
            w.message.starts_with("2 run(s) read twice"),
            "{}",
            w.message
        );
        assert!(w
            .message
            .contains("/nonexistent/y.json repeats /nonexistent/x.json"));
    }

    #[test]
    fn runs_that_only_end_on_the_same_value_both_count() {
        let rs = [
            rec("x", None, 0.8, &[]),
            rec("y", None, 0.8, &[]),
            rec("z", Some("1"), 0.8, &[]),
            rec("w", Some("2"), 0.8, &[]),
            rec("v", None, 0.8, &[0.8]),
            rec("u", None, 0.8, &[0.8]),
            // Same curve, different seeds: two runs.
            rec("s", Some("1"), 0.8, &[0.5, 0.8]),
            rec("s", Some("2"), 0.8, &[0.5, 0.8]),
            // One bit apart.
            rec("t", None, 0.8, &[0.5, 0.8]),
            rec("t", None, 0.8, &[0.5, f64::from_bits(0.8f64.to_bits() + 1)]),
        ];
        let (dropped, w) = find(&rs);
        assert!(dropped.is_empty() && w.is_none(), "{dropped:?}");
    }

    #[test]
    fn nan_values_compare_by_bits() {
        let rs = [
            rec("x", Some("1"), f64::NAN, &[]),
            rec("x", Some("1"), f64::NAN, &[]),
        ];
        assert_eq!(find(&rs).0, BTreeSet::from([1]));
    }

    #[test]
    fn byte_identical_files_are_one_run_whatever_their_names() {
        let t = tempfile::tempdir().unwrap();
        let (p, q) = (t.path().join("a.json"), t.path().join("b.json"));
        std::fs::write(&p, "{}").unwrap();
        std::fs::write(&q, "{}").unwrap();
        let mut a = rec("a", None, 0.8, &[]);
        let mut b = rec("b", None, 0.8, &[]);
        a.source = p;
        b.source = q.clone();
        assert_eq!(find(&[a.clone(), b.clone()]).0, BTreeSet::from([1]));
        std::fs::write(&q, "{ }").unwrap();
        assert!(find(&[a, b]).0.is_empty());
    }
}
