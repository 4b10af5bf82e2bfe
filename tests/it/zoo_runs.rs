//! Every check on a zoo model at a seed, run once per test binary: the zoo matrix (every seed)
//! and the report round trip (seed 0) read the same reports instead of training the zoo twice.
//! A run happens on the thread that asks first, whole, as the counting allocator needs.
//!
//! A report is also kept under `target/test-cache/zoo-runs/`, keyed by everything that
//! produces it ([`MEASURED_BY`]: the diagnostics with the zoo, the crates they judge and report
//! with, the manifests and the lockfile that pick candle and its optimisation, and the
//! compiler), as the torch tests keep their measurements ([`cache`]). A rerun whose key is
//! unchanged reads the kept report instead of training the zoo again (the longest part of a
//! warm run of this binary); a change to any of them trains it again. A fresh clone (CI) has
//! no cache, and `MLDEBUG_TEST_RERUN=1` ignores it.

use super::cache;
use mldebug_diagnostics::harness::{report_from_json, report_to_json};
use mldebug_diagnostics::zoo::ZooModel;
use mldebug_diagnostics::{CheckId, Options, Report};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// What a zoo report depends on, relative to the repository, besides the compiler.
const MEASURED_BY: &[&str] = &[
    "diagnostics",
    "crates/judge",
    "crates/memory",
    "crates/report",
    "crates/text",
    "Cargo.toml",
    "Cargo.lock",
    ".cargo/config.toml",
];

/// The options every zoo run uses: the defaults, the seed, and the label the CLI would give.
fn options(model: &ZooModel, seed: u64) -> Options {
    Options {
        seed,
        model_label: format!("zoo::{}", model.name),
        ..Options::default()
    }
}

/// Every check on `model` at `seed` ([`options`]), run the first time it is asked for.
pub fn report(model: &'static ZooModel, seed: u64) -> Arc<Report> {
    type Runs = Mutex<HashMap<(&'static str, u64), Arc<OnceLock<Arc<Report>>>>>;
    static RUNS: OnceLock<Runs> = OnceLock::new();
    let cell = RUNS
        .get_or_init(Runs::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry((model.name, seed))
        .or_default()
        .clone();
    // Outside the map's lock: another model's run goes on while this one trains.
    cell.get_or_init(|| Arc::new(kept_or_run(model, seed)))
        .clone()
}

/// The kept report of `model` at `seed` when its key is unchanged; else a run, kept.
fn kept_or_run(model: &'static ZooModel, seed: u64) -> Report {
    let kept = kept_path(model, seed);
    if let Some(path) = kept.as_ref().filter(|_| cache::enabled()) {
        if let Some(report) = std::fs::read_to_string(path)
            .ok()
            .and_then(|text| report_from_json(&text).ok())
        {
            return report;
        }
    }
    let report = (model.run)(&CheckId::ALL, &options(model, seed));
    if let Some(path) = kept {
        keep(&report, &path);
    }
    report
}

/// Where `model`'s report at `seed` is kept under the current key; `None` when the key cannot
/// be known (no compiler to ask), and nothing is kept.
fn kept_path(model: &ZooModel, seed: u64) -> Option<PathBuf> {
    static KEY: OnceLock<Option<u64>> = OnceLock::new();
    let key = (*KEY.get_or_init(|| {
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let out = std::process::Command::new(rustc).arg("-vV").output().ok()?;
        out.status
            .success()
            .then(|| cache::files_hash(MEASURED_BY, &out.stdout))
    }))?;
    Some(cache::dir("zoo-runs").join(format!("{}-seed{seed}-{key:016x}.json", model.name)))
}

/// Keeps `report` at `path` only if it reads back to the same document (the harness's JSON,
/// exact for every number, NaN and infinities included), so a kept report is the report.
fn keep(report: &Report, path: &std::path::Path) {
    let Ok(text) = report_to_json(report) else {
        return;
    };
    let again = report_from_json(&text).and_then(|back| report_to_json(&back));
    if again.as_deref() == Ok(text.as_str()) {
        cache::write(path, text.as_bytes());
    }
}
