//! What the frame recorder costs on a training step: the zoo's tiny GPT, forward + loss +
//! backward, with the recorder off and on (23 traced frames per step, one read-back per step),
//! measured in the same run. Target: on / off ≤ 1.10.
//!
//! Besides criterion's two timings, it prints the median on/off ratio over steps run in
//! alternation, which stays honest on a machine whose load changes during the run.
//!
//! `MLDEBUG_BENCH_DEVICE=cuda` (a build with `--features cuda`) runs it on the GPU; every step
//! then ends with a device synchronisation, recorder on or off, so both timings hold the work.

use candle_core::{DType, Device};
use criterion::{criterion_group, criterion_main, Criterion};
use mldebug_diagnostics::harness::parse_device;
use mldebug_diagnostics::init::seeded_var_builder;
use mldebug_diagnostics::model::DebugModel;
use mldebug_diagnostics::trace::Recorder;
use mldebug_diagnostics::zoo::tiny_gpt::{Clean, TinyGpt};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Alternating off/on pairs timed for the printed ratio.
const PAIRS: usize = 300;

struct Fixture {
    device: Device,
    model: TinyGpt<Clean>,
    batch: mldebug_diagnostics::Batch,
}

impl Fixture {
    fn new() -> Fixture {
        let name = std::env::var("MLDEBUG_BENCH_DEVICE").unwrap_or_else(|_| "cpu".into());
        let device = parse_device(&name).expect("MLDEBUG_BENCH_DEVICE");
        println!("device: {name}");
        let (_params, vb) = seeded_var_builder(0, DType::F32, &device);
        Fixture {
            model: TinyGpt::<Clean>::build(vb).expect("build"),
            batch: TinyGpt::<Clean>::batch(&device, 0).expect("batch"),
            device,
        }
    }

    fn train_step(&self) -> candle_core::backprop::GradStore {
        let out = self
            .model
            .forward(&self.batch.input, true)
            .expect("forward");
        let loss = self.model.loss(&out, &self.batch.targets).expect("loss");
        let grads = loss.backward().expect("backward");
        self.device.synchronize().expect("synchronize");
        grads
    }

    fn recorded_step(&self, recorder: &Recorder) {
        let grads = self.train_step();
        black_box((grads, recorder.end_step().expect("end_step")));
    }
}

fn time(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

fn interleaved_ratio(fx: &Fixture) -> f64 {
    let mut ratios = Vec::with_capacity(PAIRS);
    for _ in 0..PAIRS {
        let off = time(|| {
            black_box(fx.train_step());
        });
        let recorder = Recorder::start();
        let on = time(|| fx.recorded_step(&recorder));
        drop(recorder);
        ratios.push(on.as_secs_f64() / off.as_secs_f64());
    }
    ratios.sort_by(f64::total_cmp);
    ratios[PAIRS / 2]
}

fn step(c: &mut Criterion) {
    let fx = Fixture::new();
    let mut group = c.benchmark_group("tiny-gpt forward+backward");
    group.bench_function("recorder off", |b| b.iter(|| black_box(fx.train_step())));
    group.bench_function("recorder on", |b| {
        let recorder = Recorder::start();
        b.iter(|| fx.recorded_step(&recorder))
    });
    group.finish();
    println!(
        "recorder on/off, median of {PAIRS} alternating steps: {:.3}x",
        interleaved_ratio(&fx)
    );
}

criterion_group!(benches, step);
criterion_main!(benches);
