//! Reading many run files: 10,000 small JSON runs in one directory, the size of a large sweep.
//! Prints the time taken; the bound asserted is loose (debug builds, a shared machine) and only
//! catches a reader that went quadratic or serial-slow.

use mldebug_sweep::readers::read_paths;
use mldebug_sweep_writers::write;
use std::time::{Duration, Instant};

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
    let (cpu_before, start) = (cpu_time(), Instant::now());
    let runs = read_paths(&[t.path().join("runs")]).unwrap();
    let (took, cpu) = (start.elapsed(), cpu_time().saturating_sub(cpu_before));
    eprintln!(
        "read {} runs in {took:?} wall, {cpu:?} CPU (all threads)",
        runs.len()
    );
    assert_eq!(runs.len(), RUNS);
    assert_eq!(runs[RUNS - 1].seed.as_deref(), Some("4999"));
    assert!(took < BOUND, "reading {RUNS} runs took {took:?}");
}

/// This process's CPU time so far (user + system, all threads), from `/proc/self/stat`; zero
/// where there is no such file. On a shared machine, wall time says more about the neighbours.
fn cpu_time() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return Duration::ZERO;
    };
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let after = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
    let ticks: u64 = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|f| f.parse::<u64>().ok())
        .sum();
    // The kernel's USER_HZ, 100 on every Linux this runs on.
    Duration::from_millis(ticks * 10)
}
