//! `mldebug doctor` end to end: the JSON envelope and its findings, the table with sparklines
//! and PLAYBOOK links, exit codes (`--fail-on`), the SVG plot, bad input (exit 2, file and
//! place named), and `--watch` on a log that is still being written.

use mldebug_doctor::Symptom;
use mldebug_sweep_writers::{event_file, Encoding};
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
    assert_eq!(v["schema_version"], mldebug_report::SCHEMA_VERSION);
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
    for s in Symptom::ALL.into_iter().chain(Symptom::TRACE) {
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
/// process reports the NaN and exits 1 once the line is written, not before. `line(step)` is a
/// healthy log line, `nan` the line with the NaN loss at step 21.
fn watch_until_nan(file: &str, header: &str, line: &dyn Fn(usize) -> String, nan: &str) {
    let mut healthy = header.to_string();
    for step in 1..=20 {
        healthy.push_str(&line(step));
        healthy.push('\n');
    }
    watch_until_appended(file, healthy.as_bytes(), format!("{nan}\n").as_bytes());
}

/// `doctor --watch` on `file` holding `healthy`: still watching after 1.5 s; once `nan` is
/// appended it reports the NaN at step 21 and exits 1.
fn watch_until_appended(file: &str, healthy: &[u8], nan: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file);
    let mut log = std::fs::File::create(&path).unwrap();
    log.write_all(healthy).unwrap();
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
        "{file}: healthy so far, still watching"
    );
    log.write_all(nan).unwrap();
    log.flush().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{file}: watch did not stop"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.code(), Some(1), "{file}: {stdout}{stderr}");
    assert!(
        stdout.contains("fail loss-nonfinite at step 21"),
        "{file}: {stdout}"
    );
}

#[test]
fn watch_reports_a_finding_as_it_appears_and_fails_on_it() {
    let loss = |step: usize| 2.3 - 0.05 * step as f64;
    watch_until_nan(
        "train.log",
        "",
        &|step| format!("step {step} | loss {:.4}", loss(step)),
        "step 21 | loss nan",
    );
}

#[test]
fn watch_follows_a_jsonl_log_too() {
    let loss = |step: usize| 2.3 - 0.05 * step as f64;
    watch_until_nan(
        "metrics.jsonl",
        "",
        &|step| format!("{{\"step\": {step}, \"loss\": {:.4}}}", loss(step)),
        "{\"step\": 21, \"loss\": NaN}",
    );
}

#[test]
fn watch_follows_a_lightning_csv_too() {
    let loss = |step: usize| 2.3 - 0.05 * step as f64;
    watch_until_nan(
        "metrics.csv",
        "epoch,step,train_loss\n",
        &|step| format!("0,{step},{:.4}", loss(step)),
        "0,21,nan",
    );
}

#[test]
fn watch_follows_a_tensorboard_event_file_too() {
    let points: Vec<(f64, i64, &str, f64)> = (1..=21)
        .map(|step| {
            let loss = if step == 21 {
                f64::NAN
            } else {
                2.3 - 0.05 * step as f64
            };
            (1_700_000_000.0 + step as f64, step, "train/loss", loss)
        })
        .collect();
    let healthy = event_file(&points[..20], Encoding::Simple);
    let all = event_file(&points, Encoding::Simple);
    assert!(all.starts_with(&healthy));
    watch_until_appended(
        "events.out.tfevents.1700000000.host",
        &healthy,
        &all[healthy.len()..],
    );
}
