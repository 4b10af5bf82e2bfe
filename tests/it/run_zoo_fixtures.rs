//! The run zoo's judge tier, no torch needed: every committed trace fixture
//! (`tests/fixtures/run_zoo/`, see `tests/support/zoo_fixtures.rs`) judged by `mldebug doctor`
//! against what the manifest expects of its program and against a snapshot of every finding,
//! and every record read strictly: a key a probe writes that the judge's records do not know
//! fails here (a misspelled key would otherwise read as absent, and the judge stay quiet).

use crate::zoo_fixtures;
use mldebug_doctor::trace::read::without_nulls;
use mldebug_doctor::trace::records::{self, Record};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

/// The keys of one trace line that its typed record ignores (`path.to.key`), or why the line
/// does not read.
pub fn unknown_keys(line: &str) -> Result<Vec<String>, String> {
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let kind = value["kind"].as_str().unwrap_or("").to_string();
    let mut ignored = Vec::new();
    // Options show as `?` in the path: left out.
    let mut note = |path: serde_ignored::Path| ignored.push(path.to_string().replace(".?", ""));
    macro_rules! typed {
        ($t:ty) => {
            serde_ignored::deserialize::<_, _, $t>(without_nulls(value), &mut note)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
    }
    match kind.as_str() {
        "start" => typed!(records::Start),
        "dist" => typed!(records::Dist),
        "model" => typed!(records::Model),
        "optimizer" => typed!(records::Optimizer),
        "step" => typed!(records::Step),
        "cadence" => typed!(records::Cadence),
        "grads" => typed!(records::Grads),
        "adapters" => typed!(records::Adapters),
        "loss_call" => typed!(records::LossCall),
        "labels" => typed!(records::Labels),
        "out_of_range" => typed!(records::OutOfRange),
        "mode" => typed!(records::Mode),
        "nonfinite" => typed!(records::Nonfinite),
        "saturation" => typed!(records::Saturation),
        "loader" => typed!(records::Loader),
        "epoch" => typed!(records::Epoch),
        "overlap" => typed!(records::Overlap),
        "batchnorm" => typed!(records::Batchnorm),
        "load" => typed!(records::Load),
        "load_trained" => typed!(records::LoadTrained),
        "end" => typed!(records::End),
        other => {
            // Every kind the reader knows is listed above: a test below holds the two together.
            let known =
                serde_json::from_str::<Record>(line).is_ok_and(|r| !matches!(r, Record::Unknown));
            return Err(if known {
                format!("kind {other:?} is read by the judge but not checked here: add it")
            } else {
                format!("kind {other:?} is not one the judge reads")
            });
        }
    }?;
    Ok(ignored.into_iter().filter(|p| p != "kind").collect())
}

#[test]
fn a_misspelled_or_unknown_key_is_found_and_a_known_one_is_not() {
    assert_eq!(
        unknown_keys(r#"{"kind": "step", "step": 1, "loss": 2.0, "grad_norm": null}"#),
        Ok(vec![])
    );
    assert_eq!(
        unknown_keys(r#"{"kind": "step", "step": 1, "los": 2.0}"#),
        Ok(vec!["los".to_string()])
    );
    assert_eq!(
        unknown_keys(r#"{"kind": "step", "step": 1, "memory": {"rss": 1, "rss_peek": 2}}"#),
        Ok(vec!["memory.rss_peek".to_string()])
    );
    assert!(unknown_keys(r#"{"kind": "stepp", "step": 1}"#)
        .unwrap_err()
        .contains("not one the judge reads"));
}

/// (symptom, severity) of each finding of `mldebug --json doctor FIXTURE`.
fn judged(fixture: &Path) -> Result<Vec<(String, String)>, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["--json", "doctor"])
        .arg(fixture)
        .env("NO_COLOR", "1")
        .output()
        .map_err(|e| e.to_string())?;
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "not JSON ({e}), exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    Ok(doc["runs"][0]["findings"]
        .as_array()
        .map(|fs| {
            fs.iter()
                .map(|f| {
                    (
                        f["symptom"].as_str().unwrap_or("").to_string(),
                        f["severity"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default())
}

#[test]
fn every_program_has_one_fixture_and_every_fixture_a_program() {
    let entries = zoo_fixtures::entries();
    let mut problems = Vec::new();
    let fixtures = zoo_fixtures::fixtures();
    for e in &entries {
        let n = fixtures.iter().filter(|f| f.0 == e.name).count();
        if n != 1 {
            problems.push(format!("{}: {n} fixtures", e.name));
        }
    }
    for (name, _, path) in &fixtures {
        if !entries.iter().any(|e| &e.name == name) {
            problems.push(format!("{}: no program of that name", path.display()));
        }
    }
    assert!(
        problems.is_empty(),
        "bless the fixtures (MLDEBUG_BLESS=1 cargo test --test torch run_zoo):\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_fixture_is_judged_as_its_program_expects() {
    let entries = zoo_fixtures::entries();
    let queue = Mutex::new(entries.iter().collect::<Vec<_>>());
    let results = Mutex::new(BTreeMap::<String, Result<Vec<(String, String)>, String>>::new());
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| loop {
                let Some(e) = queue.lock().unwrap().pop() else {
                    break;
                };
                let r = match e.fixture() {
                    Some((path, _)) => judged(&path),
                    None => Err("no fixture".into()),
                };
                results.lock().unwrap().insert(e.name.clone(), r);
            });
        }
    });
    let results = results.into_inner().unwrap();
    let mut problems = Vec::new();
    let mut table = String::new();
    for e in &entries {
        match &results[&e.name] {
            Err(why) => problems.push(format!("{}: {why}", e.name)),
            Ok(found) => {
                if let Some(p) = e.verdict(found) {
                    problems.push(format!("{}: {p}", e.name));
                }
                let mut shown: Vec<String> = found
                    .iter()
                    .map(|(id, sev)| format!("{sev} {id}"))
                    .collect();
                shown.sort();
                shown.dedup();
                let label = if e.clean { "clean" } else { "bug" };
                table.push_str(&format!("{} ({label}): {}\n", e.name, shown.join(", ")));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    insta::assert_snapshot!("run_zoo_findings", table);
}

#[test]
fn every_fixture_record_is_one_the_judge_reads_whole() {
    // `kind.key` → the first fixture and line that writes it.
    let mut unknown = BTreeMap::<String, String>::new();
    for (name, _, path) in zoo_fixtures::fixtures() {
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, line) in text.lines().enumerate() {
            let kind = serde_json::from_str::<serde_json::Value>(line)
                .ok()
                .and_then(|v| v["kind"].as_str().map(String::from))
                .unwrap_or_default();
            let found = match unknown_keys(line) {
                Ok(keys) => keys.into_iter().map(|k| format!("{kind}.{k}")).collect(),
                Err(e) => vec![format!("{kind}: {e}")],
            };
            for k in found {
                unknown
                    .entry(k)
                    .or_insert_with(|| format!("{name} line {}", i + 1));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "a probe writes what the judge's records (crates/doctor/src/trace/records.rs) do not \
         read; add the field there and to torch/run/TRACE.md, or stop writing it:\n{}",
        unknown
            .iter()
            .map(|(k, at)| format!("  {k} (first in {at})"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
