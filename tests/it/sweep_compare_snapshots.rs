//! Snapshots of the `sweep-compare` table for the four shapes of comparison: paired, unpaired,
//! refused and multi-task. The run files are written by the test, in our JSON format, and read
//! by the real readers.

use crate::sweep_support;

use mldebug::sweep::verdict::VerdictKind;
use sweep_support::{paired, report, write_runs, Spec};

#[test]
fn paired_five_seeds_is_likely_better_not_better() {
    let dir = tempfile::tempdir().unwrap();
    // Five paired seeds with a consistent edge for A: likely better, not better.
    let a = [81.5, 80.6, 82.1, 81.3, 81.6];
    let b = [80.7, 79.6, 81.3, 80.4, 80.9];
    write_runs(
        dir.path(),
        "val/acc",
        &paired("lora_r16", &a, "baseline", &b, None),
    );
    let (text, kind) = report(&[dir.path().to_str().unwrap()]).unwrap();
    assert_eq!(kind, VerdictKind::ALikelyBetter);
    assert!(text.contains("n=6 → min p=0.0312"), "{text}");
    insta::assert_snapshot!("paired", text);
}

#[test]
fn unpaired_lower_is_better() {
    let dir = tempfile::tempdir().unwrap();
    let a = [0.31, 0.29, 0.33, 0.30, 0.32, 0.28];
    let b = [0.34, 0.30, 0.35, 0.33, 0.36];
    let mut specs: Vec<Spec> = a
        .iter()
        .enumerate()
        .map(|(i, v)| Spec {
            group: "wd0.1",
            seed: Some(i as i64),
            task: None,
            value: *v,
        })
        .collect();
    // B's seeds do not overlap A's: the design must fall back to unpaired and say why.
    specs.extend(b.iter().enumerate().map(|(i, v)| Spec {
        group: "baseline",
        seed: Some(100 + i as i64),
        task: None,
        value: *v,
    }));
    write_runs(dir.path(), "eval_loss", &specs);
    let (text, _) = report(&[dir.path().to_str().unwrap()]).unwrap();
    assert!(text.contains("lower is better; inferred"), "{text}");
    assert!(text.contains("UNPAIRED"), "{text}");
    insta::assert_snapshot!("unpaired", text);
}

#[test]
fn one_usable_run_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let specs = vec![
        Spec {
            group: "new",
            seed: Some(0),
            task: None,
            value: 0.71,
        },
        Spec {
            group: "new",
            seed: Some(1),
            task: None,
            value: f64::NAN,
        },
        Spec {
            group: "baseline",
            seed: Some(0),
            task: None,
            value: 0.69,
        },
        Spec {
            group: "baseline",
            seed: Some(1),
            task: None,
            value: 0.70,
        },
        Spec {
            group: "baseline",
            seed: Some(2),
            task: None,
            value: 0.68,
        },
    ];
    write_runs(dir.path(), "accuracy", &specs);
    let (text, kind) = report(&[dir.path().to_str().unwrap()]).unwrap();
    assert_eq!(kind, VerdictKind::Refused);
    assert!(text.contains("one run proves nothing"), "{text}");
    assert!(text.contains("new-s1"), "the failed run is listed: {text}");
    insta::assert_snapshot!("refused", text);
}

#[test]
fn multi_task_uses_holm_and_the_stratified_bootstrap() {
    let dir = tempfile::tempdir().unwrap();
    let mut specs = paired(
        "mixup",
        &[0.912, 0.905, 0.918, 0.909, 0.915, 0.911],
        "baseline",
        &[0.901, 0.897, 0.906, 0.899, 0.904, 0.902],
        Some("cifar10"),
    );
    specs.extend(paired(
        "mixup",
        &[0.702, 0.688, 0.711, 0.695, 0.699, 0.705],
        "baseline",
        &[0.697, 0.691, 0.703, 0.698, 0.694, 0.700],
        Some("cifar100"),
    ));
    specs.extend(paired(
        "mixup",
        &[0.640, 0.652, 0.633, 0.648, 0.641, 0.650],
        "baseline",
        &[0.645, 0.649, 0.640, 0.646, 0.639, 0.651],
        Some("tinyimagenet"),
    ));
    write_runs(dir.path(), "test_acc", &specs);
    let (text, _) = report(&[
        dir.path().to_str().unwrap(),
        "--bootstrap-reps",
        "2000",
        "--seed",
        "7",
    ])
    .unwrap();
    assert!(text.contains("Holm"), "{text}");
    assert!(text.contains("2000 resamples, rng seed 7"), "{text}");
    insta::assert_snapshot!("multi_task", text);
}

#[test]
fn paired_as_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let a = [81.5, 80.6, 82.1, 81.3, 81.6, 80.9];
    let b = [80.7, 79.6, 81.3, 80.4, 80.9, 80.1];
    write_runs(
        dir.path(),
        "val/acc",
        &paired("lora_r16", &a, "baseline", &b, None),
    );
    let (text, kind) = report(&[
        dir.path().to_str().unwrap(),
        "--format",
        "markdown",
        "--mde",
        "0.5",
    ])
    .unwrap();
    // Six pairs all favouring A: the exact tests can now reach 0.05 (min 0.03125).
    assert_eq!(kind, VerdictKind::ABetter, "{text}");
    insta::assert_snapshot!("paired_markdown", text);
}
