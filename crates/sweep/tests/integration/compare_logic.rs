//! The comparison's decisions on runs built in code: arms, direction, reductions, failed runs,
//! pairing, warnings and verdict rules.

use mldebug_sweep::compare::{compare, Comparison, Options};
use mldebug_sweep::pairing::PairBy;
use mldebug_sweep::record::RunRecord;
use mldebug_sweep::reduce::Reduction;
use mldebug_sweep::verdict::VerdictKind;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn run(name: &str, group: Option<&str>, seed: Option<i64>, metric: &str, value: f64) -> RunRecord {
    RunRecord {
        name: name.into(),
        group: group.map(Into::into),
        seed: seed.map(|s| s.to_string()),
        task: None,
        config: BTreeMap::new(),
        metrics: BTreeMap::from([(metric.to_string(), value)]),
        history: BTreeMap::new(),
        source: PathBuf::from(format!("runs/{name}.json")),
        place: String::new(),
    }
}

fn pairs(a: &[f64], b: &[f64], metric: &str) -> Vec<RunRecord> {
    let mut out = Vec::new();
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        out.push(run(
            &format!("a{i}"),
            Some("new"),
            Some(i as i64),
            metric,
            *x,
        ));
        out.push(run(
            &format!("b{i}"),
            Some("baseline"),
            Some(i as i64),
            metric,
            *y,
        ));
    }
    out
}

fn ids(c: &Comparison) -> Vec<&'static str> {
    c.warnings
        .iter()
        .chain(c.tasks.iter().flat_map(|t| &t.warnings))
        .map(|w| w.id)
        .collect()
}

const A8: [f64; 8] = [81.5, 80.6, 82.1, 81.3, 81.6, 80.9, 81.8, 81.1];
const B8: [f64; 8] = [80.7, 79.6, 81.3, 80.4, 80.9, 80.1, 80.8, 80.3];

#[test]
fn arms_from_the_one_varying_config_key() {
    let mut runs = Vec::new();
    for (i, lr) in [0.001, 0.0003].iter().enumerate() {
        for s in 0..3 {
            let mut r = run(
                &format!("r{i}{s}"),
                None,
                None,
                "acc",
                0.5 + s as f64 * 0.01 + i as f64 * 0.02,
            );
            r.config.insert("optim.lr".into(), json!(lr));
            r.config.insert("seed".into(), json!(s));
            r.config
                .insert("output_dir".into(), json!(format!("/tmp/r{i}{s}")));
            runs.push(r);
        }
    }
    let c = compare(&runs, &Options::default()).unwrap();
    assert_eq!(c.arms.key.to_string(), "config.optim.lr");
    assert_eq!((c.arms.a.as_str(), c.arms.b.as_str()), ("0.0003", "0.001"));
    assert!(
        c.tasks[0].paired.is_some(),
        "paired by config seed: {}",
        c.tasks[0].design
    );
    assert_eq!(c.tasks[0].paired.as_ref().unwrap().key, "seed");
    // Output dirs differ per run but are bookkeeping, not confounds.
    assert!(!ids(&c).contains(&"confounds"), "{:?}", c.warnings);

    let swapped = Options {
        a: Some("0.001".into()),
        ..Options::default()
    };
    let c = compare(&runs, &swapped).unwrap();
    assert_eq!((c.arms.a.as_str(), c.arms.b.as_str()), ("0.001", "0.0003"));
}

#[test]
fn ambiguous_arms_are_a_usage_error() {
    let mut runs = Vec::new();
    for (i, (lr, wd)) in [(0.1, 0.0), (0.2, 0.1), (0.1, 0.1)].iter().enumerate() {
        let mut r = run(&format!("r{i}"), None, None, "acc", 0.5);
        r.config.insert("lr".into(), json!(lr));
        r.config.insert("wd".into(), json!(wd));
        runs.push(r);
    }
    let err = compare(&runs, &Options::default()).unwrap_err();
    assert!(matches!(err, mldebug_sweep::Error::Usage(_)), "{err}");
    assert!(err.to_string().contains("--group-by"), "{err}");
}

#[test]
fn direction_is_inferred_and_stated() {
    let c = compare(
        &pairs(&[0.3, 0.2, 0.25], &[0.4, 0.3, 0.35], "eval/valloss"),
        &Options::default(),
    )
    .unwrap();
    assert!(!c.direction.higher_is_better);
    assert!(c.direction.how.contains("loss"));
    let c = compare(
        &pairs(&[0.3, 0.2, 0.25], &[0.4, 0.3, 0.35], "answer_acc"),
        &Options::default(),
    )
    .unwrap();
    assert!(
        c.direction.higher_is_better,
        "`answer` must not read as `wer`"
    );
    let o = Options {
        lower_is_better: true,
        ..Options::default()
    };
    let c = compare(
        &pairs(&[0.3, 0.2, 0.25], &[0.4, 0.3, 0.35], "answer_acc"),
        &o,
    )
    .unwrap();
    assert_eq!(c.direction.how, "given");
}

#[test]
fn reductions_over_history() {
    let mut r = run("x", Some("new"), Some(0), "loss", 9.0);
    r.history.insert(
        "loss".into(),
        vec![(100.0, 1.0), (200.0, 0.5), (300.0, 0.7), (400.0, 0.6)],
    );
    fn value(r: &RunRecord, how: Reduction, hib: bool) -> mldebug_sweep::Result<f64> {
        mldebug_sweep::reduce::reduce(r, "loss", how, hib).map(|x| x.value)
    }
    let red = |how, hib| value(&r, how, hib);
    assert_eq!(red(Reduction::Last, false).unwrap(), 0.6);
    assert_eq!(red(Reduction::Best, false).unwrap(), 0.5);
    assert_eq!(red(Reduction::Best, true).unwrap(), 1.0);
    assert!((red(Reduction::MeanLast { k: 2 }, false).unwrap() - 0.65).abs() < 1e-12);
    assert!((red(Reduction::MeanLast { k: 10 }, false).unwrap() - 0.7).abs() < 1e-12);
    assert_eq!(red(Reduction::AtStep { step: 200.0 }, false).unwrap(), 0.5);
    let err = red(Reduction::AtStep { step: 250.0 }, false).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("runs/x.json: run `x`: no value of `loss` at step 250"),
        "{err}"
    );
    r.history.get_mut("loss").unwrap().push((500.0, f64::NAN));
    assert!(
        value(&r, Reduction::Best, false).unwrap().is_nan(),
        "a run that ends NaN diverged"
    );
    assert_eq!(
        "mean-last:5".parse::<Reduction>().unwrap(),
        Reduction::MeanLast { k: 5 }
    );
    assert!("mean-last:0".parse::<Reduction>().is_err());
}

#[test]
fn failed_runs_are_listed_and_their_pairs_dropped() {
    let mut runs = pairs(&A8[..6], &B8[..6], "acc");
    runs[0].metrics.insert("acc".into(), f64::INFINITY);
    let c = compare(&runs, &Options::default()).unwrap();
    let t = &c.tasks[0];
    assert_eq!(t.a.failed, vec!["a0".to_string()]);
    assert_eq!(t.a.values.len(), 5);
    let p = t.paired.as_ref().unwrap();
    assert_eq!(p.pairs.len(), 5);
    assert_eq!(p.dropped_failed, vec!["0".to_string()]);
    assert!(ids(&c).contains(&"failed-runs"));
    assert!(c.runs.iter().any(|r| r.name == "a0" && r.failed));
}

#[test]
fn partial_seed_overlap_pairs_the_overlap() {
    let mut runs = pairs(&A8[..5], &B8[..5], "acc");
    runs.push(run("a9", Some("new"), Some(9), "acc", 81.0));
    let c = compare(&runs, &Options::default()).unwrap();
    let p = c.tasks[0].paired.as_ref().unwrap();
    assert_eq!(p.pairs.len(), 5);
    assert_eq!(p.unmatched, vec!["a9".to_string()]);
    let off = Options {
        pair_by: PairBy::Off,
        ..Options::default()
    };
    let c = compare(&runs, &off).unwrap();
    assert!(c.tasks[0].paired.is_none() && c.tasks[0].unpaired.is_some());
}

#[test]
fn duplicate_seed_falls_back_to_unpaired_with_a_warning() {
    let mut runs = pairs(&A8[..4], &B8[..4], "acc");
    runs.push(run("a0bis", Some("new"), Some(0), "acc", 81.0));
    let c = compare(&runs, &Options::default()).unwrap();
    assert!(c.tasks[0].paired.is_none());
    assert!(
        ids(&c).contains(&"duplicate-seed"),
        "{:?}",
        c.tasks[0].warnings
    );
}

#[test]
fn confounds_and_unequal_lengths_are_warned() {
    let mut runs = pairs(&A8[..4], &B8[..4], "acc");
    for (i, r) in runs.iter_mut().enumerate() {
        r.config
            .insert("batch_size".into(), json!(if i < 4 { 32 } else { 64 }));
        r.history.insert(
            "acc".into(),
            vec![
                (0.0, 0.0),
                (if i == 0 { 900.0 } else { 1000.0 }, r.metrics["acc"]),
            ],
        );
    }
    let c = compare(&runs, &Options::default()).unwrap();
    let w = ids(&c);
    assert!(
        w.contains(&"confounds") && w.contains(&"unequal-lengths"),
        "{w:?}"
    );
    let msg = &c
        .warnings
        .iter()
        .find(|w| w.id == "confounds")
        .unwrap()
        .message;
    assert!(msg.contains("batch_size (32, 64)"), "{msg}");
}

#[test]
fn eight_strong_pairs_are_a_better_and_mirror_to_b() {
    let c = compare(&pairs(&A8, &B8, "acc"), &Options::default()).unwrap();
    assert_eq!(c.verdict.kind, VerdictKind::ABetter, "{}", c.verdict.reason);
    let swapped = Options {
        a: Some("baseline".into()),
        b: Some("new".into()),
        ..Options::default()
    };
    let c = compare(&pairs(&A8, &B8, "acc"), &swapped).unwrap();
    assert_eq!(c.verdict.kind, VerdictKind::BBetter, "{}", c.verdict.reason);
    // Lower is better flips who wins.
    let lower = Options {
        lower_is_better: true,
        ..Options::default()
    };
    let c = compare(&pairs(&A8, &B8, "acc"), &lower).unwrap();
    assert_eq!(c.verdict.kind, VerdictKind::BBetter);
}

#[test]
fn equivalence_needs_a_margin() {
    let a = [0.801, 0.799, 0.800, 0.802, 0.798, 0.800];
    let b = [0.800, 0.800, 0.801, 0.801, 0.799, 0.799];
    let c = compare(&pairs(&a, &b, "acc"), &Options::default()).unwrap();
    assert_eq!(
        c.verdict.kind,
        VerdictKind::Inconclusive,
        "{}",
        c.verdict.reason
    );
    assert!(
        c.verdict.reason.contains("not a claim of no difference"),
        "{}",
        c.verdict.reason
    );
    let m = Options {
        equivalence_margin: Some(0.01),
        ..Options::default()
    };
    let c = compare(&pairs(&a, &b, "acc"), &m).unwrap();
    assert_eq!(
        c.verdict.kind,
        VerdictKind::NoMeaningfulDifference,
        "{}",
        c.verdict.reason
    );
}

#[test]
fn inconclusive_says_what_cannot_be_ruled_out() {
    // d = [0.09, -0.03, 0.08, 0.02]: t = 1.43 (p = 0.25), so the CI's upper end (+0.129)
    // exceeds the MDE (0.117).
    let a = [0.80, 0.70, 0.85, 0.75];
    let b = [0.71, 0.73, 0.77, 0.73];
    let c = compare(
        &pairs(&a, &b, "acc"),
        &Options {
            mde: Some(0.01),
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(c.verdict.kind, VerdictKind::Inconclusive);
    assert!(
        c.verdict
            .reason
            .contains("cannot rule out an effect as large as"),
        "{}",
        c.verdict.reason
    );
    let pw = c.tasks[0].power.as_ref().unwrap();
    assert!(pw.seeds_for_target.unwrap() > pw.seeds_for_observed.unwrap_or(0));
}

#[test]
fn anti_correlated_pairs_warn_that_pairing_is_ineffective() {
    let a = [0.80, 0.82, 0.84, 0.86, 0.88];
    let b = [0.79, 0.77, 0.75, 0.73, 0.71];
    let c = compare(&pairs(&a, &b, "acc"), &Options::default()).unwrap();
    assert!(ids(&c).contains(&"pairing-ineffective"));
}

#[test]
fn bit_identical_histories_block_a_better() {
    let mut runs = pairs(&A8, &B8, "acc");
    for r in runs.iter_mut() {
        r.history
            .insert("loss".into(), vec![(0.0, 2.0), (1.0, 1.0)]);
    }
    let o = Options {
        metric: Some("acc".into()),
        ..Options::default()
    };
    let c = compare(&runs, &o).unwrap();
    assert_eq!(
        c.verdict.kind,
        VerdictKind::ALikelyBetter,
        "{}",
        c.verdict.reason
    );
    assert!(ids(&c).contains(&"integrity"));
}

#[test]
fn best_reduction_warns_about_optimism() {
    let c = compare(
        &pairs(&A8[..3], &B8[..3], "acc"),
        &Options {
            reduce: Reduction::Best,
            ..Options::default()
        },
    )
    .unwrap();
    assert!(ids(&c).contains(&"best-of-n"));
}

#[test]
fn seed_lottery_when_the_worse_arms_best_beats_the_better_arms_mean() {
    let a = [0.80, 0.70, 0.85, 0.75];
    let b = [0.78, 0.74, 0.80, 0.71];
    let c = compare(&pairs(&a, &b, "acc"), &Options::default()).unwrap();
    assert!(ids(&c).contains(&"seed-lottery"));
    let c = compare(&pairs(&A8, &B8, "acc"), &Options::default()).unwrap();
    // max(B) = 81.3 < mean(A) = 81.36, and the ranges overlap by 0.7 of the narrower 1.5 (47%).
    assert!(!ids(&c).contains(&"seed-lottery"));
}

#[test]
fn pair_by_a_key_some_run_lacks_is_an_input_error() {
    let runs = pairs(&A8[..3], &B8[..3], "acc");
    let o = Options {
        pair_by: PairBy::Key("fold".into()),
        ..Options::default()
    };
    let err = compare(&runs, &o).unwrap_err();
    assert!(matches!(err, mldebug_sweep::Error::Input { .. }), "{err}");
    assert!(err.to_string().starts_with("runs/a0.json:"), "{err}");
}

#[test]
fn degenerate_inputs_give_numbers_not_panics() {
    // Two pairs; every difference zero; every difference the same; constant arms unpaired.
    let cases: [(&[f64], &[f64], PairBy); 4] = [
        (&[0.5, 0.7], &[0.4, 0.5], PairBy::Auto),
        (&[0.5, 0.6, 0.7], &[0.5, 0.6, 0.7], PairBy::Auto),
        (&[0.6, 0.7, 0.8], &[0.5, 0.6, 0.7], PairBy::Auto),
        (&[0.6, 0.6, 0.6], &[0.5, 0.5, 0.5], PairBy::Off),
    ];
    for (a, b, by) in cases {
        let o = Options {
            pair_by: by,
            ..Options::default()
        };
        let c = compare(&pairs(a, b, "acc"), &o).unwrap();
        let t = &c.tasks[0];
        let p = t
            .paired
            .as_ref()
            .map(|p| p.t.p)
            .or(t.unpaired.as_ref().map(|u| u.welch.p))
            .unwrap();
        assert!((0.0..=1.0).contains(&p), "{a:?} {b:?}: p = {p}");
        assert!(t.power.as_ref().unwrap().mde.is_finite());
        assert_ne!(
            c.verdict.kind,
            VerdictKind::ABetter,
            "{a:?} {b:?}: {}",
            c.verdict.reason
        );
        // The comparison serialises whatever the numbers.
        assert!(serde_json::to_string(&c).unwrap().contains("\"verdict\""));
    }
    // Identical arms: Δ = 0, nothing favoured, no seeds would detect it.
    let c = compare(
        &pairs(&[0.5, 0.6, 0.7], &[0.5, 0.6, 0.7], "acc"),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(c.verdict.kind, VerdictKind::Inconclusive);
    assert_eq!(c.tasks[0].power.as_ref().unwrap().seeds_for_observed, None);
}
