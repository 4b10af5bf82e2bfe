//! An output that cannot be written is an I/O error (exit 74, "writing to stdout: …"), not a bug
//! in mldebug (70) and not a panic; a `--plot` file that cannot be written leaves nothing behind.

use std::process::{Command, Stdio};

use crate::sweep_support;
use sweep_support::{paired, write_runs};

#[cfg(target_os = "linux")]
fn to_dev_full(args: &[&str]) -> (Option<i32>, String) {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(args)
        .env("NO_COLOR", "1")
        .stdout(Stdio::from(full))
        .stderr(Stdio::piped())
        .output()
        .expect("run mldebug");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_stdout_is_exit_74_for_every_kind_of_command() {
    let dir = tempfile::tempdir().unwrap();
    write_runs(
        dir.path(),
        "acc",
        &paired("a", &[1.0, 2.0, 3.0], "b", &[1.5, 2.5, 3.5], None),
    );
    let runs = dir.path().to_str().unwrap();
    for args in [
        vec!["quote", "rahtz"],
        vec!["list", "entries"],
        vec!["list", "entries", "--json"],
        vec!["zoo"],
        vec!["sweep-compare", runs],
        vec!["sweep-compare", runs, "--json"],
        vec!["completions", "bash"],
    ] {
        let (code, err) = to_dev_full(&args);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(code, Some(74), "{args:?}: {err}");
        assert!(err.contains("writing to stdout"), "{args:?}: {err}");
        assert!(!err.contains("bug"), "{args:?}: {err}");
    }
}

#[test]
fn a_plot_that_cannot_be_written_is_exit_74_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    write_runs(
        dir.path(),
        "acc",
        &paired("a", &[1.0, 2.0, 3.0], "b", &[1.5, 2.5, 3.5], None),
    );
    let out_dir = tempfile::tempdir().unwrap();
    // A non-empty directory where the plot file goes: the final rename fails after the
    // temporary was written, the path a full disk takes too.
    let plot = out_dir.path().join("cmp.svg");
    std::fs::create_dir(&plot).unwrap();
    std::fs::write(plot.join("keep"), "").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["sweep-compare", dir.path().to_str().unwrap(), "--plot"])
        .arg(&plot)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(74), "{err}");
    assert!(err.contains("cannot write the plot"), "{err}");
    let left: Vec<_> = std::fs::read_dir(out_dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["cmp.svg"], "a temporary was left behind");
}
