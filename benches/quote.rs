//! `mldebug quote rahtz`, in process: parse the embedded catalog from scratch and look the quotes
//! up (what one CLI call does), and the lookup alone on the parsed catalog.

use criterion::{criterion_group, criterion_main, Criterion};
use mldebug::catalog::{self, lookup};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let files: Vec<(String, String)> = catalog::embedded_files()
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    c.bench_function("parse embedded catalog + quote rahtz", |b| {
        b.iter(|| {
            let cat = catalog::parse_files(black_box(files.clone()));
            let hits = lookup::quotes(&cat, black_box("rahtz"), None).expect("rahtz is quoted");
            black_box(hits.len())
        })
    });
    let parsed = catalog::embedded();
    c.bench_function("quote rahtz on the parsed catalog", |b| {
        b.iter(|| lookup::quotes(parsed, black_box("rahtz"), None).map(|h| h.len()))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
