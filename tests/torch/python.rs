//! The Python tests of the driver and the zoo (`torch/tests`: the contract piped through the
//! driver, every twin's bug present and absent from its clean model) and of the run probes
//! (`torch/run/tests`: the bootstrap, each probe's numbers, two torchrun ranks), run with the
//! test Python so a change to either is checked by the same `cargo test`. The run zoo's own
//! script test (`torch/run_zoo/test_zoo_scripts.py`) is not repeated here: `run_zoo` runs every
//! script of it under `mldebug run`.

use super::support::{python, repo};
use std::process::Command;

#[test]
fn the_python_tests_of_the_driver_and_the_zoo_pass() {
    unittest("torch/tests");
}

#[test]
fn the_python_tests_of_the_run_probes_pass() {
    unittest("torch/run/tests");
}

fn unittest(dir: &str) {
    let out = Command::new(python())
        .args(["-m", "unittest", "discover", "-s", dir, "-t", dir])
        .current_dir(repo())
        .env("OMP_NUM_THREADS", "1")
        .output()
        .expect("run python");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(60).collect();
    assert!(
        out.status.success(),
        "python -m unittest in {dir} failed:\n{}",
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
}
