//! The Python the torch tests run: `$MLDEBUG_TEST_PYTHON`, else the project's cached venv
//! (`.ci/torch-venv` creates it outside the clone on first use and reuses it after). Without
//! one the tests fail with the reason: they never pass silently.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex, OnceLock};

pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The interpreter with torch (created once per test binary).
pub fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        if let Some(p) = std::env::var_os("MLDEBUG_TEST_PYTHON").filter(|p| !p.is_empty()) {
            return PathBuf::from(p);
        }
        let script = repo().join(".ci/torch-venv");
        let out = Command::new("bash")
            .arg(&script)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        assert!(
            out.status.success(),
            "the torch tests need a Python with torch: {} failed ({}):\n{}\n\
             Set MLDEBUG_TEST_PYTHON to an interpreter that has torch, transformers and peft.",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(
            !path.is_empty(),
            "{} printed no interpreter",
            script.display()
        );
        PathBuf::from(path)
    })
}

/// What the test Python prints for `python -c script args...`; panics with its stderr when it
/// fails.
#[allow(
    dead_code,
    reason = "used by tests/it, which shares this file; not by the torch binary"
)]
pub fn python_c<S: AsRef<std::ffi::OsStr>>(script: &str, args: &[S]) -> String {
    let out = Command::new(python())
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("run the test Python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `mldebug <args>` with the test Python.
pub fn mldebug(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(args)
        .env("MLDEBUG_PYTHON", python())
        .env("NO_COLOR", "1")
        .current_dir(repo())
        .output()
        .expect("run mldebug")
}

/// [`mldebug`] for a test about what the binary makes of a driver run (its report, exit code,
/// schema): the driver's measurement is kept under `target/test-cache/torch-cli` and replayed
/// while the driver, the request, the interpreter and the fixtures' folder are unchanged
/// (`MLDEBUG_TORCH_REPLAY`, see [`super::cache`]); the judgement and the report run anew. A
/// test about the Python side itself (an error, a time limit, the same seed twice) calls
/// [`mldebug`].
pub fn mldebug_replayed(args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mldebug"));
    command
        .args(args)
        .env("MLDEBUG_PYTHON", python())
        .env("NO_COLOR", "1")
        .current_dir(repo());
    if super::cache::enabled() {
        command.env("MLDEBUG_TORCH_REPLAY", super::cache::dir("torch-cli"));
    }
    command.output().expect("run mldebug")
}

/// [`mldebug_replayed`], run once per binary for a given `args`: tests that only read the same
/// report (its findings, its schema) share one run of it.
pub fn mldebug_shared(args: &[&str]) -> Arc<Output> {
    type Runs = Mutex<HashMap<Vec<String>, Arc<OnceLock<Arc<Output>>>>>;
    static RUNS: OnceLock<Runs> = OnceLock::new();
    let key: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let cell = RUNS
        .get_or_init(Runs::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key)
        .or_default()
        .clone();
    // Outside the map's lock: a second caller of the same args waits for the first run only.
    cell.get_or_init(|| Arc::new(mldebug_replayed(args)))
        .clone()
}

/// The `--json` document on stdout; a panic showing stdout and stderr when it is not JSON.
pub fn json_doc(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// What is wrong with `doc` against `schema/output.schema.json` (nothing: empty); the schema is
/// read and compiled once per test binary.
pub fn schema_errors(doc: &serde_json::Value) -> Vec<String> {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    let validator = VALIDATOR.get_or_init(|| {
        let path = repo().join("schema/output.schema.json");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let schema: serde_json::Value = serde_json::from_str(&text).expect("the schema is JSON");
        jsonschema::validator_for(&schema).expect("a valid JSON Schema")
    });
    validator.iter_errors(doc).map(|e| e.to_string()).collect()
}

/// The `--json` report's findings as (check, status) pairs, and the document.
pub fn statuses(out: &Output) -> (Vec<(String, String)>, serde_json::Value) {
    let doc = json_doc(out);
    let checks = doc["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| {
            (
                c["check"].as_str().unwrap_or("").to_string(),
                c["status"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    (checks, doc)
}

/// `--timeout` limits for a test that needs the run to reach some point (torch imported, a
/// step taken) before the limit ends it: the first keeps the suite quick; on a machine so
/// loaded that torch has not imported by then (a 2-core machine running the suite's zoos beside
/// it: 20 s for `import torch` was seen), the run is tried again with the longer ones.
pub const ESCALATING_TIMEOUTS: [u64; 3] = [12, 40, 150];

/// Runs `attempt(limit)` for each of [`ESCALATING_TIMEOUTS`] until it says the run reached what
/// the test is about; returns that attempt's result and its limit (the last one's when none
/// did, so the test's assertions report what happened).
pub fn with_escalating_timeout<T>(mut attempt: impl FnMut(u64) -> (T, bool)) -> (T, u64) {
    let mut last = None;
    for limit in ESCALATING_TIMEOUTS {
        let (result, reached) = attempt(limit);
        if reached {
            return (result, limit);
        }
        last = Some((result, limit));
    }
    last.expect("at least one limit")
}
