//! The numbers that size a run are bounded, and `--timeout` stops any model, a zoo model too.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn mldebug(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the mldebug binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn steps_out_of_range_are_a_usage_error_naming_the_flag_and_the_range() {
    for (cmd, bad) in [
        (&["check", "overfit", "--model", "zoo::mlp"][..], "0"),
        (&["check", "overfit", "--model", "zoo::mlp"][..], "100001"),
        (
            &["check", "overfit", "--model", "zoo::mlp-zero-init"][..],
            "18446744073709551615",
        ),
        (
            &["check", "overfit", "--model", "crate::Net"][..],
            "18446744073709551616",
        ),
        (&["demo"][..], "1000000"),
    ] {
        let mut args = cmd.to_vec();
        args.extend(["--steps", bad]);
        let out = mldebug(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("--steps"), "{err}");
        assert!(
            err.contains("expected a step count from 1 to 100000"),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn a_zero_or_absurd_timeout_is_a_usage_error_in_the_same_words_for_check_and_run() {
    for bad in ["0", "86401", "99999999999999999999", "-5"] {
        let flag = format!("--timeout={bad}");
        for args in [
            &["check", "overfit", "--model", "zoo::mlp", &flag][..],
            &["run", &flag, "--", "true"][..],
        ] {
            let out = mldebug(args);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
            let err = stderr(&out);
            assert!(err.contains("--timeout"), "{err}");
            assert!(
                err.contains("expected a number of seconds from 1 to 86400"),
                "{err}"
            );
        }
    }
}

#[test]
fn timeout_stops_a_zoo_model_that_would_train_for_minutes() {
    // The zero-init MLP never memorises its batch, so it would run all 100000 steps.
    let started = Instant::now();
    let out = mldebug(&[
        "--json",
        "check",
        "all",
        "--model",
        "zoo::mlp-zero-init",
        "--steps",
        "100000",
        "--timeout",
        "2",
    ]);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a report");
    let checks = v["checks"].as_array().unwrap();
    assert_eq!(
        checks.len(),
        mldebug_diagnostics::CheckId::ALL.len(),
        "every requested check is reported"
    );
    let overfit = checks.iter().find(|f| f["check"] == "overfit").unwrap();
    assert_eq!(overfit["status"], "error");
    assert_eq!(
        overfit["summary"],
        "timed out after 2s (--timeout) and was stopped"
    );
    // The quick checks before it finished with their own verdicts.
    let init = checks.iter().find(|f| f["check"] == "init-loss").unwrap();
    assert_ne!(init["status"], "error", "{init}");
}
