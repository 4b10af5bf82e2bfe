//! Benchmarks of `sweep-compare`:
//! - end to end: 10,000 JSON run files (5,000 seeds × 2 arms, each with a 20-point history) read,
//!   reduced and compared (target: under 1 s on 2 cores);
//! - the stratified bootstrap: 50,000 resamples of 2 arms × 10 runs (target: under 100 ms).
//!
//! The end-to-end figure is also split into reading and comparing. Run with
//! `cargo bench --bench sweep`.

use criterion::{criterion_group, criterion_main, Criterion};
use mldebug::sweep::compare::{compare, Options};
use mldebug::sweep::readers::read_paths;
use mldebug::sweep::stats::bootstrap::{stratified, TaskScores};
use std::path::{Path, PathBuf};
use std::time::Duration;

const SEEDS: usize = 5_000;
const HISTORY: usize = 20;

fn write_runs(dir: &Path) {
    for seed in 0..SEEDS {
        for (arm, shift) in [("new", 0.004), ("baseline", 0.0)] {
            // A deterministic, seed-dependent value so the arms are correlated within a seed.
            let base = 0.80 + ((seed * 7919) % 1000) as f64 * 1e-5 + shift;
            let history: Vec<String> = (1..=HISTORY)
                .map(|k| format!("[{}, {}]", k * 100, base - 0.1 / k as f64))
                .collect();
            let text = format!(
                r#"{{"name": "{arm}-s{seed}", "group": "{arm}", "seed": {seed}, "metrics": {{"val_acc": {base}}}, "config": {{"lr": 0.0003, "batch_size": 64, "optimizer": {{"name": "adamw", "betas": [0.9, 0.999]}}}}, "history": {{"val_acc": [{}]}}}}"#,
                history.join(", ")
            );
            std::fs::write(dir.join(format!("{arm}-s{seed}.json")), text).unwrap();
        }
    }
}

fn end_to_end(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    write_runs(dir.path());
    let paths: Vec<PathBuf> = vec![dir.path().to_path_buf()];
    let opts = Options::default();
    let mut group = c.benchmark_group("sweep-compare");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("10k JSON run files, read + reduce + stats", |b| {
        b.iter(|| {
            let runs = read_paths(&paths).unwrap();
            assert_eq!(runs.len(), 2 * SEEDS);
            let cmp = compare(&runs, &opts).unwrap();
            std::hint::black_box(cmp.verdict.kind)
        })
    });
    // The same work split in two, to see where the time goes.
    group.bench_function("10k JSON run files, read only", |b| {
        b.iter(|| std::hint::black_box(read_paths(&paths).unwrap().len()))
    });
    let runs = read_paths(&paths).unwrap();
    group.bench_function("10k runs in memory, reduce + stats only", |b| {
        b.iter(|| std::hint::black_box(compare(&runs, &opts).unwrap().verdict.kind))
    });
    group.finish();
}

fn bootstrap(c: &mut Criterion) {
    let tasks = vec![TaskScores {
        a: (0..10).map(|i| 0.80 + i as f64 * 0.003).collect(),
        b: (0..10)
            .map(|i| 0.79 + ((i * 7) % 10) as f64 * 0.003)
            .collect(),
    }];
    let mut group = c.benchmark_group("bootstrap");
    group.sample_size(20);
    group.bench_function("50k stratified resamples, 2 x 10 runs", |b| {
        b.iter(|| std::hint::black_box(stratified(&tasks, true, 50_000, 0, 0.95)))
    });
    group.finish();
}

criterion_group!(benches, end_to_end, bootstrap);
criterion_main!(benches);
