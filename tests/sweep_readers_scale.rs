//! Reading many run files: 10,000 small JSON runs in one directory, the size of a large sweep.
//! Prints the time taken; the bound asserted is loose (debug builds, a shared machine) and only
//! catches a reader that went quadratic or serial-slow.

mod sweep_readers_support;

use mldebug::sweep::readers::read_paths;
use std::time::{Duration, Instant};
use sweep_readers_support::write;

/// Files in the sweep.
const RUNS: usize = 10_000;

/// Generous for a debug build on two busy cores; a release build takes a small fraction of it.
const BOUND: Duration = Duration::from_secs(10);

#[test]
fn ten_thousand_json_runs() {
    let t = tempfile::tempdir().unwrap();
    for i in 0..RUNS {
        let run = serde_json::json!({
            "name": format!("run{i}"), "group": if i % 2 == 0 { "A" } else { "B" }, "seed": i / 2,
            "metrics": {"val_loss": 0.3 + (i % 7) as f64 * 0.01, "val_acc": 0.9},
            "config": {"lr": 3e-4, "optimizer": {"name": "adamw", "betas": [0.9, 0.999]}},
            "history": {"val_loss": [[100, 0.9], [200, 0.5], [300, 0.3]]}
        });
        write(t.path(), &format!("runs/r{i:05}.json"), run.to_string());
    }
    let start = Instant::now();
    let runs = read_paths(&[t.path().join("runs")]).unwrap();
    let took = start.elapsed();
    eprintln!("read {} runs in {took:?}", runs.len());
    assert_eq!(runs.len(), RUNS);
    assert_eq!(runs[RUNS - 1].seed.as_deref(), Some("4999"));
    assert!(took < BOUND, "reading {RUNS} runs took {took:?}");
}
