//! The driver's and the zoo's own Python tests (`torch/tests`: the contract piped through the
//! driver, every twin's bug present and absent from its clean model), run with the test Python
//! so a change to either is checked by the same `cargo test`.

use super::support::{python, repo};
use std::process::Command;

#[test]
fn the_python_tests_of_the_driver_and_the_zoo_pass() {
    let out = Command::new(python())
        .args([
            "-m",
            "unittest",
            "discover",
            "-s",
            "torch/tests",
            "-t",
            "torch/tests",
        ])
        .current_dir(repo())
        .env("OMP_NUM_THREADS", "1")
        .output()
        .expect("run python");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(60).collect();
    assert!(
        out.status.success(),
        "python -m unittest failed:\n{}",
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
}
