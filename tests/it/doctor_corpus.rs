//! `mldebug doctor` on the recorded corpus (tests/fixtures/doctor, made by `make_runs.py` from
//! real CPU runs with torch, the HF Trainer and Lightning): every planted problem is found, in
//! every format that logs its evidence, within a few logging intervals of the step it was
//! planted at; the healthy runs of every format get no `fail` and no `warn`.
//!
//! `cargo test --test it doctor_corpus:: -- --nocapture` prints the table of planted against
//! detected steps.

use mldebug::doctor::read;
use mldebug_doctor::robust::logging_interval;
use mldebug_doctor::{diagnose, Options, Severity, Symptom};
use serde_json::Value;
use std::path::PathBuf;

/// A finding may start this many logging intervals of its series away from the planted step:
/// a detector reads trends, and a trend needs a few points to turn…
const TOLERANCE_INTERVALS: f64 = 3.0;
/// …or this share of the run, when that is more: the trends are running medians over 2% of the
/// run on each side (`mldebug_doctor::robust`), which sets their resolution on per-step logs.
const TOLERANCE_SHARE: f64 = 0.02;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/doctor")
}

fn manifest() -> Vec<Value> {
    let text = std::fs::read_to_string(corpus().join("manifest.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["runs"].as_array().unwrap().clone()
}

/// (run/format, its findings, the history it was read into) for every format of every run.
fn diagnosed(
    run: &Value,
) -> Vec<(
    String,
    mldebug_doctor::Diagnosis,
    mldebug_doctor::RunHistory,
)> {
    let dir = corpus().join(run["run"].as_str().unwrap());
    run["formats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let f = f.as_str().unwrap();
            let runs = read::read(&[dir.join(f)], &[]).unwrap_or_else(|e| panic!("{f}: {e}"));
            assert_eq!(runs.len(), 1, "{}/{f} holds one run", run["run"]);
            let h = runs[0].history.clone();
            (f.to_string(), diagnose(&h, &Options::default()), h)
        })
        .collect()
}

#[test]
fn healthy_runs_of_every_format_get_no_fail_and_no_warn() {
    let mut checked = 0;
    for run in manifest().iter().filter(|r| r["healthy"] == true) {
        for (format, d, _) in diagnosed(run) {
            checked += 1;
            let alarms: Vec<String> = d
                .findings
                .iter()
                .filter(|f| f.severity >= Severity::Warn)
                .map(|f| format!("{} {}: {}", f.severity.label(), f.symptom, f.summary))
                .collect();
            let infos = d.findings.len() - alarms.len();
            println!(
                "healthy {}/{format}: {} warn/fail, {infos} info",
                run["run"],
                alarms.len()
            );
            assert!(alarms.is_empty(), "{}/{format}: {alarms:#?}", run["run"]);
        }
    }
    assert!(checked >= 15, "only {checked} healthy run formats");
}

#[test]
fn every_planted_problem_is_found_near_its_step() {
    let mut seen = std::collections::BTreeSet::new();
    for run in manifest().iter().filter(|r| r["healthy"] == false) {
        let planted = run["planted"].as_object().unwrap();
        for (format, d, h) in diagnosed(run) {
            for (id, step) in planted {
                if run["blind"][&format][id].is_string() {
                    continue;
                }
                // A format that logs every tenth step first shows a one-step event later.
                let step = run["shown_at"][&format].get(id).unwrap_or(step);
                let symptom = Symptom::from_id(id).unwrap();
                let found = d
                    .findings
                    .iter()
                    .filter(|f| f.symptom == symptom && f.severity >= Severity::Warn)
                    .min_by(|a, b| {
                        let off = |s: f64| step.as_f64().map_or(0.0, |p| (s - p).abs());
                        off(a.step).total_cmp(&off(b.step))
                    })
                    .unwrap_or_else(|| {
                        panic!(
                            "{}/{format}: {id} not found; found {:#?}",
                            run["run"], d.findings
                        )
                    });
                let series = h.get(&found.metric).unwrap();
                let interval = logging_interval(&series.points);
                let span = series.points.last().unwrap().0 - series.points[0].0;
                let tolerance =
                    (TOLERANCE_INTERVALS * interval.max(1.0)).max(TOLERANCE_SHARE * span);
                match step.as_f64() {
                    Some(p) => {
                        println!(
                            "planted {}/{format}: {id} at {p}, found at {} ({} interval {interval})",
                            run["run"], found.step, found.metric
                        );
                        assert!(
                            (found.step - p).abs() <= tolerance,
                            "{}/{format}: {id} found at step {}, planted at {p} (interval {interval})",
                            run["run"],
                            found.step
                        );
                    }
                    None => println!(
                        "planted {}/{format}: {id} (no single planted step), found at {}",
                        run["run"], found.step
                    ),
                }
                seen.insert(id.clone());
            }
        }
    }
    let all: std::collections::BTreeSet<String> =
        Symptom::ALL.iter().map(|s| s.id().to_string()).collect();
    assert_eq!(seen, all, "every symptom id is proven by a planted run");
}
