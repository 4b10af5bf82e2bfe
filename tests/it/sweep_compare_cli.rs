//! `mldebug sweep-compare` as a process: exit codes with and without `--gate`, input errors
//! (exit 2, naming the file), JSON carrying every input, Markdown and the SVG plot.

use crate::sweep_support;

use std::process::Command;
use sweep_support::{bin, paired, write_runs, Spec};

const STRONG_A: [f64; 8] = [81.5, 80.6, 82.1, 81.3, 81.6, 80.9, 81.8, 81.1];
const STRONG_B: [f64; 8] = [80.7, 79.6, 81.3, 80.4, 80.9, 80.1, 80.8, 80.3];

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin())
        .args(["--color", "never", "sweep-compare"])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn gate_passes_only_when_a_is_better() {
    let dir = tempfile::tempdir().unwrap();
    write_runs(
        dir.path(),
        "val/acc",
        &paired("new", &STRONG_A, "baseline", &STRONG_B, None),
    );
    let d = dir.path().to_str().unwrap();
    let (code, out, _) = run(&[d, "--gate"]);
    assert!(out.contains("VERDICT: A BETTER"), "{out}");
    assert_eq!(code, 0);
    // The same runs with the arms swapped: B is better, so the gate fails.
    let (code, out, _) = run(&[d, "--a", "baseline", "--b", "new", "--gate"]);
    assert!(out.contains("VERDICT: B BETTER"), "{out}");
    assert_eq!(code, 1);
    // Without --gate the comparison ran, so exit 0 whatever the verdict.
    let (code, _, _) = run(&[d, "--a", "baseline", "--b", "new"]);
    assert_eq!(code, 0);
}

#[test]
fn underpowered_result_fails_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    write_runs(
        dir.path(),
        "val/acc",
        &paired("new", &STRONG_A[..5], "baseline", &STRONG_B[..5], None),
    );
    let (code, out, _) = run(&[dir.path().to_str().unwrap(), "--gate"]);
    assert!(out.contains("A LIKELY BETTER"), "{out}");
    assert_eq!(code, 1);
}

#[test]
fn a_run_missing_the_metric_is_an_input_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write_runs(
        dir.path(),
        "val/acc",
        &paired("new", &STRONG_A[..3], "baseline", &STRONG_B[..3], None),
    );
    write_runs(
        dir.path(),
        "train/loss",
        &[Spec {
            group: "new",
            seed: Some(9),
            task: None,
            value: 0.1,
        }],
    );
    let (code, out, err) = run(&[dir.path().to_str().unwrap(), "--metric", "val/acc"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty(), "nothing half written: {out}");
    assert!(
        err.contains("new-s9.json") && err.contains("no metric `val/acc`"),
        "{err}"
    );
}

#[test]
fn bad_flags_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    write_runs(
        dir.path(),
        "val/acc",
        &paired("new", &STRONG_A[..3], "baseline", &STRONG_B[..3], None),
    );
    let d = dir.path().to_str().unwrap();
    for args in [
        vec![d, "--alpha", "0.7"],
        vec![d, "--reduce", "median"],
        vec![d, "--reduce", "at-step:100"],
        vec![d, "--a", "nope"],
        vec![d, "--equivalence-margin", "-1"],
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
    }
}

#[test]
fn json_carries_every_input_and_number() {
    let dir = tempfile::tempdir().unwrap();
    let mut specs = paired("new", &STRONG_A[..4], "baseline", &STRONG_B[..4], None);
    specs.push(Spec {
        group: "new",
        seed: Some(7),
        task: None,
        value: f64::NAN,
    });
    write_runs(dir.path(), "val/acc", &specs);
    for flags in [vec!["--json"], vec!["--format", "json"]] {
        let mut args = vec![dir.path().to_str().unwrap()];
        args.extend(flags);
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["schema_version"], mldebug_report::SCHEMA_VERSION);
        assert_eq!(v["command"], "sweep-compare");
        assert_eq!(v["metric"], "val/acc");
        assert_eq!(v["reduction"]["kind"], "last");
        let runs = v["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 9);
        for r in runs {
            assert!(r["file"].as_str().unwrap().ends_with(".json"));
            assert!(r["seed"].is_string());
            assert!(r["arm"] == "A" || r["arm"] == "B");
        }
        let failed: Vec<&serde_json::Value> = runs.iter().filter(|r| r["failed"] == true).collect();
        assert_eq!(failed.len(), 1);
        assert_eq!(
            failed[0]["value"], "NaN",
            "a NaN is the string NaN, never null"
        );
        let t = &v["tasks"][0];
        assert_eq!(t["paired"]["pairs"].as_array().unwrap().len(), 4);
        assert!(t["paired"]["sign_flip"]["min_attainable"].as_f64().unwrap() > 0.12);
        assert!(t["power"]["mde"].as_f64().unwrap() > 0.0);
        assert!(v["verdict"]["kind"].is_string());
        assert_eq!(t["a"]["failed"][0], "new-s7");
    }
}

#[test]
fn markdown_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    write_runs(
        dir.path(),
        "val/acc",
        &paired("new", &STRONG_A[..5], "baseline", &STRONG_B[..5], None),
    );
    let svg = dir.path().join("cmp.svg");
    let (code, out, err) = run(&[
        dir.path().to_str().unwrap(),
        "--format",
        "markdown",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("## sweep-compare"), "{out}");
    assert!(out.contains("| arm | name | n |"), "{out}");
    assert!(out.contains("**VERDICT: A LIKELY BETTER"), "{out}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.starts_with("<svg") && text.contains("A − B with 95% CI"),
        "{}",
        &text[..200]
    );
    // Five seed lines joined A to B, five A points, five B points at least.
    assert!(text.matches("<circle").count() >= 15);
}

/// `--bootstrap-reps` sizes an allocation and the run time: 2^64 − 1 used to panic with a
/// capacity overflow and 1e11 to abort. Out of range is a usage error naming the range.
#[test]
fn bootstrap_reps_out_of_range_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    write_runs(
        dir.path(),
        "val/acc",
        &paired("new", &STRONG_A, "baseline", &STRONG_B, None),
    );
    let d = dir.path().to_str().unwrap();
    for reps in [
        "18446744073709551615",
        "100000000000",
        "1000000001",
        "0",
        "99",
    ] {
        let (code, out, err) = run(&[d, "--bootstrap-reps", reps]);
        assert_eq!(code, 2, "{reps}: {err}");
        assert!(out.is_empty());
        assert!(
            err.contains("--bootstrap-reps") && err.contains("100..=1000000"),
            "{err}"
        );
    }
    let (code, _, err) = run(&[d, "--bootstrap-reps", "1000"]);
    assert_eq!(code, 0, "{err}");
}

/// A metric of 1e80 used to panic in Welch's t (exit 101); past ±1e150 the comparison is
/// refused in words with exit 0 (1 with --gate), and below it the answer is finite.
#[test]
fn huge_metric_values_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let a = [1e80, 3e80, 2e80, 5e80];
    let b = [1.0, 2.0, 3.0, 4.0];
    write_runs(
        dir.path(),
        "val/acc",
        &paired("new", &a, "baseline", &b, None),
    );
    let d = dir.path().to_str().unwrap();
    let (code, out, err) = run(&[d, "--no-pair"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("VERDICT:") && !out.contains("NaN"), "{out}");
    let huge = tempfile::tempdir().unwrap();
    write_runs(
        huge.path(),
        "val/acc",
        &paired("new", &[1e200, 2e200], "baseline", &b[..2], None),
    );
    let (code, out, err) = run(&[huge.path().to_str().unwrap(), "--gate"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("VERDICT: REFUSED") && out.contains("2e200"),
        "{out}"
    );
}

/// A byte-identical copy of a run (one file twice, or a whole folder given twice) is one run:
/// the verdict, the gate and every number stay those of the runs without the copies, and a
/// warning names each copy and the file it repeats.
#[test]
fn a_run_given_twice_counts_once() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    write_runs(
        &runs,
        "val/acc",
        &paired("new", &STRONG_A[..5], "baseline", &STRONG_B[..5], None),
    );
    let d = runs.to_str().unwrap();
    let (code, alone, _) = run(&[d, "--gate"]);
    assert!(alone.contains("A LIKELY BETTER"), "{alone}");
    assert_eq!(code, 1);
    let (_, alone_json, _) = run(&[d, "--format", "json"]);

    // One file copied under another name, in a second folder.
    let copies = dir.path().join("copies");
    std::fs::create_dir(&copies).unwrap();
    let original = runs.join("new-s0.json");
    let copy = copies.join("new-s0 (copy).json");
    std::fs::copy(&original, &copy).unwrap();
    let c = copies.to_str().unwrap();
    // The same path twice is dropped when read (no warning); a copy is found by its content.
    for (args, copied) in [
        (vec![d, c], true),
        (vec![d, d], false),
        (vec![d, c, d], true),
    ] {
        let (code, out, err) = run(&[&args[..], &["--gate"]].concat());
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        assert!(out.contains("A LIKELY BETTER"), "{out}");
        assert_eq!(
            out.contains("read twice, each counted once"),
            copied,
            "{out}"
        );
        let (_, json, _) = run(&[&args[..], &["--format", "json"]].concat());
        let (a, b): (serde_json::Value, serde_json::Value) = (
            serde_json::from_str(&alone_json).unwrap(),
            serde_json::from_str(&json).unwrap(),
        );
        assert_eq!(a["tasks"][0]["paired"], b["tasks"][0]["paired"], "{args:?}");
        assert_eq!(a["tasks"][0]["a"], b["tasks"][0]["a"]);
        assert_eq!(a["verdict"], b["verdict"]);
    }
    let (_, json, _) = run(&[d, c, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let w = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["id"] == "duplicate-run")
        .expect("a duplicate-run warning");
    let expected = format!(
        "{} repeats {} (byte-identical files)",
        copy.display(),
        original.display()
    );
    assert!(w["message"].as_str().unwrap().contains(&expected), "{w}");
}
