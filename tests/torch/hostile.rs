//! Models that fight the driver: a helper process that outlives `--timeout` or holds the pipes
//! after the checks, `sys.exit` and `os._exit` in `build()` (the driver's own exit codes must
//! not be read from them), a loss of the wrong shape, targets outside the classes, 256 MB on
//! stderr without a line end, a program that is not Python, a dotted NAME, and flags that do
//! not apply to a PyTorch model.

use super::support::{mldebug, mldebug_replayed, python, repo, statuses, with_escalating_timeout};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const MODELS: &str = "tests/fixtures/torch/models.py";
/// What the run may take beyond `--timeout` (or beyond a run whose helper is not waited on):
/// the kill, two seconds of grace for the pipes, and the test machine's slack. A run that waits
/// for the 120-second helper is far past it.
const SLACK: Duration = Duration::from_secs(15);

fn target(name: &str) -> String {
    format!("{MODELS}:{name}")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `mldebug args` with the helpers' pids noted in a file; the elapsed time and the pids.
fn timed_with_pids(args: &[&str]) -> (Output, Duration, Vec<u32>) {
    let pids = tempfile::NamedTempFile::new().unwrap();
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(args)
        .env("MLDEBUG_PYTHON", python())
        .env("MLDEBUG_TEST_PIDFILE", pids.path())
        .env("NO_COLOR", "1")
        .current_dir(repo())
        .output()
        .unwrap();
    let elapsed = t.elapsed();
    let noted = std::fs::read_to_string(pids.path()).unwrap_or_default();
    let pids = noted
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    (out, elapsed, pids)
}

/// Gone, or a zombie waiting for init: no longer running.
fn stopped(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let gone = std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
            s.rfind(')')
                .is_some_and(|i| s[i + 1..].trim_start().starts_with('Z'))
        });
        if gone || Instant::now() > deadline {
            return gone;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `check init-loss` on the model `name` with `--timeout`, tried with longer limits
/// ([`with_escalating_timeout`]) when `build()` never ran in time, so the assertions are made on
/// a run that reached it: the output, the time it took, the helpers' pids, the limit.
fn timed_out_in_build(name: &str) -> (Output, Duration, Vec<u32>, u64) {
    let ((out, elapsed, pids), timeout) = with_escalating_timeout(|timeout| {
        let (out, elapsed, pids) = timed_with_pids(&[
            "--json",
            "check",
            "init-loss",
            "--torch",
            &target(name),
            "--timeout",
            &timeout.to_string(),
        ]);
        let reached_build = !pids.is_empty();
        ((out, elapsed, pids), reached_build)
    });
    (out, elapsed, pids, timeout)
}

#[cfg(target_os = "linux")]
#[test]
fn a_helper_started_in_build_neither_outlives_the_timeout_nor_holds_the_run() {
    // The three runs go side by side: two of them only wait for their time limit.
    std::thread::scope(|scope| {
        for name in ["HelperHangs", "HelperHangsOwnSession"] {
            scope.spawn(move || {
                let (out, elapsed, pids, timeout) = timed_out_in_build(name);
                assert_eq!(out.status.code(), Some(4), "{name}: {}", stderr(&out));
                let (_, doc) = statuses(&out);
                let summary = doc["checks"][0]["summary"].as_str().unwrap();
                assert!(
                    summary.contains(&format!("timed out after {timeout}s")),
                    "{name}: {summary}"
                );
                assert!(
                    elapsed < Duration::from_secs(timeout) + SLACK,
                    "{name}: {elapsed:?}"
                );
                assert!(!pids.is_empty(), "{name}: build() never ran: {summary}");
                for pid in pids {
                    assert!(stopped(pid), "{name}: helper {pid} still runs");
                }
            });
        }
        // The checks finish while a helper in its own session holds stderr: the run ends with
        // them, and the helper is stopped.
        scope.spawn(|| {
            let (out, elapsed, pids) = timed_with_pids(&[
                "--json",
                "check",
                "init-loss",
                "--torch",
                &target("HelperLeftBehind"),
            ]);
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            // The helper sleeps 120 s: a run that waited for it is past this (the margin is
            // for torch's import on a loaded machine).
            assert!(elapsed < Duration::from_secs(100), "{elapsed:?}");
            assert!(!pids.is_empty());
            for pid in pids {
                assert!(stopped(pid), "helper {pid} still runs");
            }
        });
    });
}

#[test]
fn exits_and_exceptions_in_build_are_errors_of_the_users_code() {
    let cases = [
        ("ExitsInBuild", "build() called sys.exit(4)"),
        (
            "HardExitInBuild",
            "exited (exit status 3) before the model was built",
        ),
        (
            "RaisesInBuild",
            "build() raised ValueError: build is broken on purpose",
        ),
    ];
    for (name, says) in cases {
        let out = mldebug(&["--json", "check", "all", "--torch", &target(name)]);
        assert_eq!(out.status.code(), Some(4), "{name}: {}", stderr(&out));
        let (checks, doc) = statuses(&out);
        assert_eq!(checks.len(), 8, "{name}");
        assert!(
            checks.iter().all(|(_, s)| s == "error"),
            "{name}: {checks:?}"
        );
        let summary = doc["checks"][0]["summary"].as_str().unwrap();
        assert!(summary.contains(says), "{name}: {summary}");
        assert!(!summary.contains("import torch"), "{name}: {summary}");
    }
}

#[test]
fn a_loss_of_the_wrong_shape_is_an_error_and_targets_past_the_classes_fail() {
    let out = mldebug(&[
        "--json",
        "check",
        "label-mask",
        "--torch",
        &target("VectorLoss"),
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let (checks, doc) = statuses(&out);
    assert_eq!(checks, [("label-mask".into(), "error".into())], "{doc:#}");
    let summary = doc["checks"][0]["summary"].as_str().unwrap();
    assert!(summary.contains("one element"), "{summary}");
    assert!(!summary.contains("candle"), "{summary}");

    let out = mldebug(&[
        "--json",
        "check",
        "label-mask",
        "--torch",
        &target("TargetsOutOfRange"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let (checks, doc) = statuses(&out);
    assert_eq!(checks, [("label-mask".into(), "fail".into())], "{doc:#}");
    let summary = doc["checks"][0]["summary"].as_str().unwrap();
    assert!(summary.contains("outside [0, 4)"), "{summary}");
}

/// The peak resident memory of `mldebug args`, read from /proc while it runs (VmHWM).
#[cfg(target_os = "linux")]
fn peak_memory(args: &[&str]) -> (Output, u64) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(args)
        .env("MLDEBUG_PYTHON", python())
        .current_dir(repo())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0;
    while child.try_wait().unwrap().is_none() {
        if let Ok(text) = std::fs::read_to_string(&status) {
            let hwm = text.lines().find_map(|l| l.strip_prefix("VmHWM:"));
            if let Some(kb) = hwm.and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            {
                peak_kb = kb;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    (child.wait_with_output().unwrap(), peak_kb * 1024)
}

#[cfg(target_os = "linux")]
#[test]
fn a_quarter_gigabyte_of_stderr_without_a_line_end_is_read_in_bounded_memory() {
    // The whole stream held as one line would take at least its 256 MB.
    const BOUND: u64 = 96 << 20;
    let (out, peak) = peak_memory(&[
        "--json",
        "check",
        "init-loss",
        "--torch",
        &target("FloodsStderr"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(peak > 0 && peak < BOUND, "peak {} MB", peak >> 20);
}

#[test]
fn a_program_that_is_not_python_is_a_usage_error_naming_it() {
    let cat = Path::new("/bin/cat");
    if !cat.exists() {
        return;
    }
    let out = mldebug(&[
        "check",
        "init-loss",
        "--torch",
        &target("Mlp"),
        "--python",
        "/bin/cat",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not a Python interpreter") && err.contains("/bin/cat"),
        "{err}"
    );
}

#[test]
fn a_dotted_name_is_resolved_as_attribute_access() {
    let out = mldebug_replayed(&[
        "--json",
        "check",
        "init-loss",
        "--torch",
        &target("Outer.Inner"),
    ]);
    let (checks, _) = statuses(&out);
    assert_eq!(
        checks,
        [("init-loss".into(), "pass".into())],
        "{}",
        stderr(&out)
    );
    let out = mldebug(&["check", "init-loss", "--torch", &target("Outer.Nope")]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no `Nope` in `Outer`"), "{err}");
}

#[test]
fn flags_for_a_model_in_a_crate_are_refused_with_torch_before_python_starts() {
    let t = Instant::now();
    let cases: [(&[&str], &str); 4] = [
        (&["--batch", "does-not-exist.safetensors"], "--batch"),
        (&["--input", "tokens:4x8"], "--input"),
        (&["--manifest-path", "Cargo.toml"], "--manifest-path"),
        (&["-p", "mine"], "--package (-p)"),
    ];
    for (extra, flag) in cases {
        let model = target("Mlp");
        let mut args = vec!["check", "all", "--torch", &model];
        args.extend_from_slice(extra);
        let out = mldebug(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(
            err.contains(&format!("{flag} does not apply to a PyTorch model")),
            "{err}"
        );
    }
    // Refused before any Python started (one start takes seconds).
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}
