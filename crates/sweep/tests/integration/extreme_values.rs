//! Extreme and degenerate metric values through the whole comparison: paired and unpaired, one
//! task and several. Each must end in a finite answer or an explicit refusal, never a panic and
//! never a NaN verdict. (A value of 1e80 used to panic in Welch's t: its degrees of freedom
//! squared a variance of 1e160 and came out NaN.)

use mldebug_sweep::compare::{compare, Options, MAX_MAGNITUDE};
use mldebug_sweep::pairing::PairBy;
use mldebug_sweep::record::RunRecord;
use mldebug_sweep::verdict::VerdictKind;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn run(name: &str, group: &str, seed: usize, task: Option<&str>, value: f64) -> RunRecord {
    RunRecord {
        name: name.into(),
        group: Some(group.into()),
        seed: Some(seed.to_string()),
        task: task.map(Into::into),
        config: BTreeMap::new(),
        metrics: BTreeMap::from([("acc".to_string(), value)]),
        history: BTreeMap::new(),
        source: PathBuf::from(format!("runs/{name}.json")),
        place: String::new(),
    }
}

fn records(a: &[f64], b: &[f64], task: Option<&str>) -> Vec<RunRecord> {
    let t = task.unwrap_or("");
    let mut out: Vec<RunRecord> = a
        .iter()
        .enumerate()
        .map(|(i, v)| run(&format!("{t}a{i}"), "a", i, task, *v))
        .collect();
    out.extend(
        b.iter()
            .enumerate()
            .map(|(i, v)| run(&format!("{t}b{i}"), "b", i, task, *v)),
    );
    out
}

fn samples() -> Vec<(&'static str, Vec<f64>, Vec<f64>)> {
    let big = 1e300;
    vec![
        (
            "1e80 against small",
            vec![1e80, 2e80, 3e80],
            vec![1.0, 2.0, 3.0],
        ),
        (
            "1e149 spread",
            vec![1e149, -1e149, 5e148],
            vec![0.0, 1e149, -1e149],
        ),
        (
            "1e200",
            vec![1e200, 1e200, 2e200],
            vec![1e199, 2e199, 3e199],
        ),
        (
            "f64::MAX",
            vec![f64::MAX, f64::MAX],
            vec![-f64::MAX, f64::MAX],
        ),
        ("±1e300", vec![big, -big, big], vec![-big, big, -big]),
        (
            "MIN_POSITIVE",
            vec![f64::MIN_POSITIVE; 4],
            vec![0.0, f64::MIN_POSITIVE, 0.0, 0.0],
        ),
        (
            "subnormal",
            vec![5e-324, 1e-323, 0.0],
            vec![0.0, 0.0, 5e-324],
        ),
        ("all equal", vec![0.5; 5], vec![0.5; 5]),
        ("equal within arm", vec![0.7; 5], vec![0.6; 5]),
        ("two identical", vec![1.0, 1.0], vec![1.0, 1.0]),
        ("one run", vec![1.0], vec![2.0, 3.0]),
        (
            "mixed magnitudes",
            vec![1e-300, 1e140, -1e-300],
            vec![1e140, 1e-300, 0.0],
        ),
        ("zeros and a tie", vec![0.0, 0.0, 1.0], vec![0.0, 0.0, 1.0]),
    ]
}

fn check(name: &str, recs: &[RunRecord], pair: PairBy) {
    let opts = Options {
        a: Some("a".into()),
        b: Some("b".into()),
        higher_is_better: true,
        pair_by: pair,
        bootstrap_reps: 500,
        ..Options::default()
    };
    let cmp = std::panic::catch_unwind(|| compare(recs, &opts))
        .unwrap_or_else(|_| panic!("{name}: the comparison panicked"))
        .unwrap_or_else(|e| panic!("{name}: the comparison errored: {e}"));
    for task in &cmp.tasks {
        let largest = recs
            .iter()
            .filter(|r| r.task == task.task)
            .flat_map(|r| r.metrics.values())
            .fold(0.0f64, |m, v| m.max(v.abs()));
        let kind = task.verdict.kind;
        if largest > MAX_MAGNITUDE {
            assert_eq!(
                kind,
                VerdictKind::Refused,
                "{name}: {}",
                task.verdict.reason
            );
            assert!(
                task.verdict.reason.contains("beyond"),
                "{name}: {}",
                task.verdict.reason
            );
            continue;
        }
        if kind == VerdictKind::Refused {
            continue;
        }
        for t in task
            .paired
            .iter()
            .map(|p| &p.t)
            .chain(task.unpaired.iter().map(|u| &u.welch))
        {
            assert!(t.df > 0.0 && !t.df.is_nan(), "{name}: df {}", t.df);
            assert!((0.0..=1.0).contains(&t.p), "{name}: p {}", t.p);
        }
        assert!(
            !task.verdict.reason.contains("NaN"),
            "{name}: {}",
            task.verdict.reason
        );
    }
    // Every number serializes (the JSON report is built from the same structure).
    serde_json::to_string(&cmp).unwrap_or_else(|e| panic!("{name}: {e}"));
}

#[test]
fn extreme_values_give_an_answer_or_a_refusal_never_a_panic() {
    for (name, a, b) in samples() {
        for pair in [PairBy::Auto, PairBy::Off] {
            check(name, &records(&a, &b, None), pair.clone());
        }
        let mut multi = records(&a, &b, Some("t1"));
        multi.extend(records(&[0.1, 0.2, 0.3], &[0.2, 0.3, 0.4], Some("t2")));
        check(&format!("{name} (two tasks)"), &multi, PairBy::Auto);
    }
}

#[test]
fn a_value_past_the_bound_is_refused_naming_the_run() {
    let recs = records(&[1e80, 2e80, 1e200], &[1.0, 2.0, 3.0], None);
    let cmp = compare(
        &recs,
        &Options {
            a: Some("a".into()),
            b: Some("b".into()),
            ..Options::default()
        },
    )
    .unwrap();
    let v = &cmp.tasks[0].verdict;
    assert_eq!(v.kind, VerdictKind::Refused);
    assert!(
        v.reason.contains("a2") && v.reason.contains("1e200"),
        "{}",
        v.reason
    );
}
