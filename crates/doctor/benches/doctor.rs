//! Benchmark of `mldebug doctor`'s detectors: a 1,000,000-step history (a per-step training
//! loss with noise and a spike every 50,000 steps, a validation loss every 1,000 steps, learning
//! rate, grad norm, throughput and memory at every step: 5,001,000 points) diagnosed end to end
//! (target: under 1 s). Run with `cargo bench -p mldebug-doctor --bench doctor`.

use criterion::{criterion_group, criterion_main, Criterion};
use mldebug_doctor::{diagnose, Options, RunHistory};
use std::collections::BTreeMap;
use std::time::Duration;

const STEPS: usize = 1_000_000;

/// A fixed pseudo-random sequence in [-0.5, 0.5) (no RNG crate needed for a benchmark input).
fn noise(state: &mut u64) -> f64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
}

fn history() -> RunHistory {
    let mut s = 7u64;
    let mut h: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut push = |k: &str, step: f64, v: f64| h.entry(k.to_string()).or_default().push((step, v));
    for i in 0..STEPS {
        let step = i as f64;
        let progress = i as f64 / STEPS as f64;
        let level = 0.5 + 2.0 * (-5.0 * progress).exp();
        let spike = if i % 50_000 == 25_000 { 3.0 } else { 0.0 };
        push(
            "train/loss",
            step,
            level * (1.0 + 0.2 * noise(&mut s)) + spike,
        );
        push("train/learning_rate", step, 3e-4 * (1.0 - progress));
        push("train/grad_norm", step, 1.0 + 0.3 * noise(&mut s));
        push(
            "perf/samples_per_second",
            step,
            1000.0 * (1.0 + 0.1 * noise(&mut s)),
        );
        push("perf/memory_mb", step, 2048.0 + 4.0 * noise(&mut s));
        if i % 1000 == 999 {
            push("val/loss", step, level * 1.05);
        }
    }
    RunHistory::new(h, BTreeMap::new())
}

fn bench(c: &mut Criterion) {
    let run = history();
    let opts = Options::default();
    let mut group = c.benchmark_group("doctor");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("1,000,000-step history, every detector", |b| {
        b.iter(|| {
            let d = diagnose(&run, &opts);
            std::hint::black_box(d.findings.len())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
