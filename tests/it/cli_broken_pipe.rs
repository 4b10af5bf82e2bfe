//! A reader that stops early (`mldebug ... | head -1`) is not an error: every command exits 0
//! without a panic when stdout is closed under it.

use std::process::{Command, Stdio};

fn exits_cleanly_with_stdout_closed(args: &[&str]) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(args)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mldebug");
    // Close the read end before the child has written anything: its first write fails with EPIPE.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait for mldebug");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked"),
        "`mldebug {}` panicked on a closed pipe:\n{stderr}",
        args.join(" ")
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "`mldebug {}` on a closed pipe:\n{stderr}",
        args.join(" ")
    );
}

#[test]
fn completions_survive_a_closed_pipe() {
    exits_cleanly_with_stdout_closed(&["completions", "bash"]);
}

#[test]
fn zoo_and_check_survive_a_closed_pipe() {
    exits_cleanly_with_stdout_closed(&["zoo"]);
    exits_cleanly_with_stdout_closed(&["zoo", "--json"]);
    exits_cleanly_with_stdout_closed(&["check", "init-loss", "--model", "zoo::mlp"]);
}

#[test]
fn knowledge_commands_survive_a_closed_pipe() {
    exits_cleanly_with_stdout_closed(&["quote", "karpathy"]);
    exits_cleanly_with_stdout_closed(&["list", "entries"]);
}
