//! `mldebug doctor` end to end: the JSON envelope and its findings, the table with sparklines
//! and PLAYBOOK links, exit codes (`--fail-on`), the SVG plot, bad input (exit 2, file and
//! place named), and `--watch` on a log that is still being written.

use mldebug_doctor::Symptom;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn corpus(run: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/doctor")
        .join(run)
}

/// Runs `mldebug doctor <args>`; returns (exit code, stdout, stderr).
fn doctor(args: &[&str], paths: &[&Path]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .arg("doctor")
        .args(paths)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn json_has_the_envelope_and_each_finding_its_id_severity_step_numbers_and_row() {
    let path = corpus("torch/nan-batch/metrics.jsonl");
    let (code, out, err) = doctor(&["--json"], &[&path]);
    assert_eq!(code, 1, "a fail finding exits 1: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema_version"], 3);
    assert_eq!(v["command"], "doctor");
    let f = &v["runs"][0]["findings"][0];
    assert_eq!(f["symptom"], "loss-nonfinite");
    assert_eq!(f["severity"], "fail");
    assert_eq!(f["step"], 400.0);
    assert_eq!(f["numbers"]["last_finite_step"], 399.0);
    assert_eq!(f["playbook"]["link"], "PLAYBOOK.md#loss-nonfinite");
    assert!(f["playbook"]["next"][0]
        .as_str()
        .unwrap()
        .starts_with("mldebug check"));
    assert!(v["counts"]["fail"].as_u64().unwrap() >= 1);
}

#[test]
fn the_table_shows_sparklines_findings_and_the_playbook_row() {
    let path = corpus("torch/lr-jump/stdout.log");
    let (code, out, _) = doctor(&[], &[&path]);
    assert_eq!(code, 1);
    assert!(
        out.contains("read 72 of 72 lines (step-line: 72 lines, 1–72)"),
        "{out}"
    );
    assert!(out.contains("loss-diverging"), "{out}");
    assert!(
        out.contains("loss-diverging → PLAYBOOK.md#loss-diverging"),
        "{out}"
    );
    assert!(
        out.contains('▁') && out.contains('█'),
        "a sparkline per series: {out}"
    );
}

#[test]
fn healthy_runs_exit_0_and_fail_on_warn_lowers_the_bar() {
    let healthy = corpus("hf/healthy-s0/trainer_state.json");
    let (code, out, _) = doctor(&[], &[&healthy]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no findings"), "{out}");
    let warned = corpus("torch/leak/metrics.jsonl");
    assert_eq!(doctor(&[], &[&warned]).0, 0, "warn only: exit 0 by default");
    assert_eq!(doctor(&["--fail-on", "warn"], &[&warned]).0, 1);
}

#[test]
fn several_runs_get_findings_each() {
    let a = corpus("torch/shuffled-labels/metrics.jsonl");
    let b = corpus("torch/healthy-s0/metrics.jsonl");
    let (_, out, _) = doctor(&["--json"], &[&a, &b]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["findings"][0]["symptom"], "loss-stuck");
    assert_eq!(runs[1]["findings"].as_array().unwrap().len(), 0);
}

#[test]
fn the_plot_marks_each_finding() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("curves.svg");
    let path = corpus("torch/lr-jump/metrics.jsonl");
    let (_, _, err) = doctor(&["--plot", svg.to_str().unwrap()], &[&path]);
    let text = std::fs::read_to_string(&svg).unwrap_or_else(|e| panic!("{e}: {err}"));
    assert!(text.starts_with("<svg"));
    for id in ["loss-diverging", "grad-norm-explosion", "lr-schedule"] {
        assert!(text.contains(id), "{id} marked");
    }
}

#[test]
fn a_text_file_with_no_training_line_is_bad_input_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.log");
    std::fs::write(&path, "hello\nno numbers here\n").unwrap();
    let (code, out, err) = doctor(&[], &[&path]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(
        err.starts_with(&format!(
            "error: {}: lines 1–2: no training-log line",
            path.display()
        )),
        "{err}"
    );
}

#[test]
fn an_unknown_metric_is_a_usage_error_with_a_suggestion() {
    let path = corpus("torch/healthy-s0/metrics.jsonl");
    let (code, _, err) = doctor(&["--metric", "train/los"], &[&path]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean: train/loss"), "{err}");
    let (code, out, _) = doctor(&["--metric", "val/loss", "--json"], &[&path]);
    assert_eq!(code, 0);
    assert!(out.contains("\"role\": \"eval_loss\""), "{out}");
}

#[test]
fn every_symptom_id_has_a_playbook_row() {
    let c = mldebug::catalog::embedded();
    for s in Symptom::ALL {
        let row = c
            .symptoms
            .iter()
            .chain(&c.log_symptoms)
            .find(|r| r.id == s.id());
        let row = row.unwrap_or_else(|| panic!("no PLAYBOOK row {{#{}}}", s.id()));
        assert!(
            !row.hypotheses.is_empty() && !row.commands.is_empty(),
            "{}",
            s.id()
        );
    }
}

/// A training script writing its log while `doctor --watch --fail-on fail` follows it: the
/// process reports the NaN and exits 1 once the line is written, not before.
#[test]
fn watch_reports_a_finding_as_it_appears_and_fails_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("train.log");
    let mut log = std::fs::File::create(&path).unwrap();
    for step in 1..=20 {
        writeln!(log, "step {step} | loss {:.4}", 2.3 - 0.05 * step as f64).unwrap();
    }
    log.flush().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args([
            "doctor",
            "--watch",
            "--fail-on",
            "fail",
            "--idle-timeout",
            "30",
        ])
        .arg(&path)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "healthy so far: still watching"
    );
    writeln!(log, "step 21 | loss nan").unwrap();
    log.flush().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "watch did not stop"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("fail loss-nonfinite at step 21 (loss)"),
        "{stdout}"
    );
}
