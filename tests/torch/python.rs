//! The Python tests of the driver and the zoo (`torch/tests`: the contract piped through the
//! driver, every twin's bug present and absent from its clean model) and of the run probes
//! (`torch/run/tests`: the bootstrap, each probe's numbers, two torchrun ranks), run with the
//! test Python so a change to either is checked by the same `cargo test`. The modules that start
//! interpreters of their own run in one each, the others share one ([`ALONE`]), two at a time
//! (most of their time is spent starting Pythons that import torch). They test Python alone, so
//! an interpreter's modules that passed are not run again until a file under `torch/` or the
//! interpreter changes ([`cache`]). The run zoo's own script test
//! (`torch/run_zoo/test_zoo_scripts.py`) is not repeated here: `run_zoo` runs every script of
//! it under `mldebug run`.

use super::cache;
use super::support::{python, repo};
use std::process::Command;
use std::sync::Mutex;

/// Interpreters run at once.
const WORKERS: usize = 2;

/// Modules that spend most of their time in interpreters they start themselves (the bootstrap
/// tested the way a program starts, two torchrun ranks, the driver started as the binary starts
/// it): each runs in an interpreter of its own, beside the others. Every other module of a
/// folder runs in one shared interpreter, which imports torch (and the `torch._dynamo` that
/// torch's optimizers import) once for all of them instead of once each, about 4 s of CPU a
/// module. The modules share nothing but the interpreter: each test builds its own models and
/// starts or forks its own programs.
const ALONE: &[&str] = &["test_bootstrap", "test_distributed", "test_driver"];

#[test]
fn the_python_tests_of_the_driver_and_the_zoo_pass() {
    unittest("torch/tests");
}

#[test]
fn the_python_tests_of_the_run_probes_pass() {
    unittest("torch/run/tests");
}

/// Runs every `test_*.py` module of `dir` ([`ALONE`] in an interpreter each, the others
/// together in one); fails with the tail of each failing interpreter's output.
fn unittest(dir: &str) {
    let mut modules: Vec<String> = std::fs::read_dir(repo().join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with("test_") && n.ends_with(".py"))
        .map(|n| n.trim_end_matches(".py").to_string())
        .collect();
    modules.sort();
    assert!(!modules.is_empty(), "{dir} holds no test module");
    let (alone, shared): (Vec<String>, Vec<String>) = modules
        .into_iter()
        .partition(|m| ALONE.contains(&m.as_str()));
    let mut batches: Vec<Vec<String>> = alone.into_iter().map(|m| vec![m]).collect();
    if !shared.is_empty() {
        batches.push(shared);
    }
    let inputs = cache::inputs_hash(&["torch"]);
    let queue = Mutex::new(batches);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..WORKERS {
            s.spawn(|| loop {
                let Some(batch) = queue.lock().unwrap().pop() else {
                    break;
                };
                let names = batch.join("+");
                // The batch's names as a hash: twenty module names joined pass the 255 bytes a
                // file name may hold, and a mark that cannot be written is never found again.
                let passed = cache::dir("python").join(format!(
                    "{}-{:016x}-{inputs:016x}.pass",
                    dir.replace('/', "-"),
                    mldebug_text::hash::fnv1a(names.as_bytes())
                ));
                if cache::enabled() && passed.is_file() {
                    println!("{dir}: {names} passed before with these files, not rerun");
                    continue;
                }
                match run_modules(dir, &batch) {
                    Ok(()) => cache::write(&passed, b"passed\n"),
                    Err(e) => failures.lock().unwrap().push(e),
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn run_modules(dir: &str, modules: &[String]) -> Result<(), String> {
    let out = Command::new(python())
        .args(["-m", "unittest"])
        .args(modules)
        .current_dir(repo().join(dir))
        .env("OMP_NUM_THREADS", "1")
        .output()
        .expect("run python");
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(60).collect();
    Err(format!(
        "python -m unittest {} in {dir} failed:\n{}",
        modules.join(" "),
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    ))
}
