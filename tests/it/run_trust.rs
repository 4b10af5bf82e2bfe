//! `mldebug run`'s promises that hold without PyTorch: `--trace` replaces only a regular file
//! that is empty or an earlier trace, and is checked before the program starts; a timeout,
//! Ctrl-C and SIGTERM have their own exit codes; the program ends when mldebug is killed; a
//! signal that killed the program is named; a file that is not executable is called so; and a
//! flag that hides the probes is found past the values of `-W` and `-X`.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn mldebug(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(args)
        .env("NO_COLOR", "1")
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run mldebug")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `mldebug run --trace TRACE -- sh -c 'touch ran'` in `dir`: whether the command ran is the
/// file `ran`.
fn run_with_trace(dir: &Path, trace: &str) -> (Output, bool) {
    let out = mldebug(
        dir,
        &["run", "--trace", trace, "--", "sh", "-c", "touch ran"],
    );
    let ran = dir.join("ran").exists();
    let _ = std::fs::remove_file(dir.join("ran"));
    (out, ran)
}

const A_TRACE: &str = "{\"kind\": \"start\", \"trace\": 1, \"pid\": 1}\n";

#[test]
fn trace_refuses_what_is_not_a_regular_file_or_not_a_trace_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The script being run, and any other file that is not a trace.
    std::fs::write(d.join("train.py"), "print('hello')\n").unwrap();
    // A symbolic link to a file that is not a trace, and one to nothing.
    std::fs::write(d.join("notes.txt"), "mine\n").unwrap();
    std::os::unix::fs::symlink(d.join("notes.txt"), d.join("link.jsonl")).unwrap();
    std::os::unix::fs::symlink(d.join("gone"), d.join("dangling.jsonl")).unwrap();
    // A FIFO.
    let fifo = d.join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    std::fs::create_dir(d.join("folder")).unwrap();
    for (trace, says) in [
        ("train.py", "not a trace mldebug wrote"),
        ("link.jsonl", "not a trace mldebug wrote"),
        ("dangling.jsonl", "a symbolic link to nothing"),
        ("fifo", "a FIFO, not a regular file"),
        ("/dev/null", "a character device, not a regular file"),
        ("folder", "a folder"),
    ] {
        let (out, ran) = run_with_trace(d, trace);
        assert_eq!(out.status.code(), Some(2), "{trace}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{trace}: {}", stderr(&out));
        assert!(!ran, "{trace}: the command ran");
    }
    assert_eq!(
        std::fs::read_to_string(d.join("train.py")).unwrap(),
        "print('hello')\n"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("notes.txt")).unwrap(),
        "mine\n"
    );
    assert!(std::fs::symlink_metadata(d.join("link.jsonl"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    // Nothing else was left in the folder (no temporary file).
    let mut names: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "dangling.jsonl",
            "fifo",
            "folder",
            "link.jsonl",
            "notes.txt",
            "train.py"
        ]
    );
}

#[test]
fn an_unwritable_trace_is_found_before_the_program_starts() {
    let dir = tempfile::tempdir().unwrap();
    let (out, ran) = run_with_trace(dir.path(), "/proc/self/x.jsonl");
    assert_eq!(out.status.code(), Some(74), "{}", stderr(&out));
    assert!(stderr(&out).contains("nothing was run"), "{}", stderr(&out));
    assert!(!ran);
}

#[test]
fn a_trace_an_empty_file_and_a_link_to_a_trace_are_accepted_and_left_when_nothing_was_traced() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("old.jsonl"), A_TRACE).unwrap();
    // A byte-order mark before the first line does not hide a trace.
    std::fs::write(d.join("bom.jsonl"), format!("\u{feff}{A_TRACE}")).unwrap();
    std::fs::write(d.join("empty.jsonl"), "").unwrap();
    std::os::unix::fs::symlink(d.join("old.jsonl"), d.join("link.jsonl")).unwrap();
    for trace in [
        "old.jsonl",
        "bom.jsonl",
        "empty.jsonl",
        "link.jsonl",
        "new.jsonl",
    ] {
        let (out, ran) = run_with_trace(d, trace);
        // `sh` trains nothing: a usage error after it ran, and the trace is not written.
        assert_eq!(out.status.code(), Some(2), "{trace}: {}", stderr(&out));
        assert!(ran, "{trace}");
        assert!(
            stderr(&out).contains("no process wrote a trace"),
            "{}",
            stderr(&out)
        );
    }
    assert_eq!(
        std::fs::read_to_string(d.join("old.jsonl")).unwrap(),
        A_TRACE
    );
    assert!(!d.join("new.jsonl").exists());
    assert!(std::fs::symlink_metadata(d.join("link.jsonl"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn a_timeout_is_exit_124_with_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = mldebug(
        dir.path(),
        &["--json", "run", "--timeout", "1", "--", "sleep", "30"],
    );
    assert_eq!(out.status.code(), Some(124), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["outcome"]["how"], "timed_out");
    // Nothing traced says only what is known: no model ran forward and no optimizer was made
    // (not that none imported torch, or that no model was built: a run timed out while
    // importing torch, or while its optimizer was being made, traces nothing either).
    let text = doc["findings"].to_string();
    assert!(
        text.contains("no process ran a model forward or finished making an optimizer"),
        "{text}"
    );
    assert!(!text.contains("imported torch"), "{text}");
}

/// `mldebug run -- sh -c SCRIPT`, started in the background.
fn start(dir: &Path, script: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["--json", "run", "--", "sh", "-c", script])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The pids of processes whose command line is exactly `words`.
fn pids_of(words: &[&str]) -> Vec<u32> {
    let want: Vec<u8> = words
        .iter()
        .flat_map(|w| [w.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.parse::<u32>().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let state = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let zombie = state
                .rfind(')')
                .is_some_and(|i| state[i + 1..].trim_start().starts_with('Z'));
            (cmdline == want && !zombie).then_some(pid)
        })
        .collect()
}

/// Waits up to `limit` for `cond`.
fn eventually(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    cond()
}

fn signal(pid: u32, sig: &str) {
    assert!(Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap()
        .success());
}

#[test]
fn ctrl_c_and_sigterm_are_exits_130_and_143_with_the_report() {
    let dir = tempfile::tempdir().unwrap();
    for (sig, code, name, seconds) in [
        ("-INT", 130, "SIGINT", "1301"),
        ("-TERM", 143, "SIGTERM", "1431"),
    ] {
        let child = start(dir.path(), &format!("sleep {seconds}"));
        assert!(
            eventually(Duration::from_secs(20), || !pids_of(&["sleep", seconds])
                .is_empty()),
            "the program did not start"
        );
        signal(child.id(), sig);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{sig}: {}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["outcome"]["how"], "interrupted");
        assert_eq!(doc["outcome"]["signal"], name);
        assert!(pids_of(&["sleep", seconds]).is_empty());
    }
}

#[test]
fn the_program_and_its_folder_end_when_mldebug_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    // A shell (the command's first process) and a grandchild in its group.
    let mut child = start(dir.path(), "sleep 1371; true");
    assert!(
        eventually(Duration::from_secs(20), || !pids_of(&["sleep", "1371"])
            .is_empty()),
        "the program did not start"
    );
    let folders = |pid: u32| -> Vec<std::path::PathBuf> {
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&format!("mldebug-run-{pid}-")))
            })
            .collect()
    };
    assert_eq!(folders(child.id()).len(), 1);
    signal(child.id(), "-KILL");
    let _ = child.wait();
    assert!(
        eventually(Duration::from_secs(10), || pids_of(&["sleep", "1371"])
            .is_empty()),
        "the program outlived mldebug"
    );
    assert!(
        eventually(Duration::from_secs(10), || folders(child.id()).is_empty()),
        "the private folder outlived mldebug"
    );
}

#[test]
fn a_program_killed_by_a_signal_is_named_by_the_signal() {
    let dir = tempfile::tempdir().unwrap();
    let out = mldebug(dir.path(), &["run", "--", "sh", "-c", "kill -SEGV $$"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("SIGSEGV (signal 11)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_file_that_is_not_executable_is_called_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("train.py"), "print(1)\n").unwrap();
    for cmd in ["./train.py", "train.py"] {
        let out = mldebug(dir.path(), &["run", "--", cmd]);
        assert_eq!(out.status.code(), Some(2));
        assert!(
            stderr(&out).contains("is not executable"),
            "{cmd}: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("mldebug run -- python ./train.py"),
            "{cmd}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn a_hiding_flag_after_the_value_of_w_or_x_is_refused() {
    if Command::new("python3").arg("-c").arg("1").status().is_err() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for flags in [["-W", "ignore", "-S"], ["-X", "dev", "-I"]] {
        let mut args = vec!["run", "--", "python3"];
        args.extend(flags);
        args.push("train.py");
        let out = mldebug(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("nothing could be observed"),
            "{flags:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn run_debug_says_what_start_up_decided_in_each_python_process() {
    if Command::new("python3").arg("-c").arg("1").status().is_err() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["run", "--", "python3", "-c", "print('hi')"])
        .env("MLDEBUG_RUN_DEBUG", "1")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for line in [
        "mldebug run debug: pid ",
        "waiting for the program to import torch",
        "exit: torch was never imported",
    ] {
        assert!(err.contains(line), "{line:?} missing from:\n{err}");
    }
    assert!(
        err.contains("MLDEBUG_RUN_DEBUG=1 shows what start-up decided"),
        "{err}"
    );
    // Without it, start-up says nothing.
    let quiet = mldebug(dir.path(), &["run", "--", "python3", "-c", "print('hi')"]);
    assert!(
        !stderr(&quiet).contains("mldebug run debug"),
        "{}",
        stderr(&quiet)
    );
}

#[test]
fn a_program_that_ignores_sigint_is_killed_after_the_grace_at_the_time_limit() {
    if Command::new("python3").arg("-c").arg("1").status().is_err() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = mldebug(
        dir.path(),
        &[
            "--json",
            "run",
            "--timeout",
            "1",
            "--",
            "python3",
            "-c",
            "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(1237)",
        ],
    );
    assert_eq!(out.status.code(), Some(124), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(30));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["outcome"]["how"], "timed_out");
    assert!(!std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains("time.sleep(1237)"))
    }));
}

#[test]
fn a_double_forked_daemon_ends_with_the_run_even_without_kill_on_path() {
    if Command::new("python3").arg("-c").arg("1").status().is_err() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A daemon: fork, setsid, fork again, the middle process exits: its parent is init, it is
    // in no group of the run's, and it outlives the program.
    let daemon = "import os, time\n\
                  if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        \
                  time.sleep(1459)\n    os._exit(0)\ntime.sleep(1)\n";
    let python3 = String::from_utf8(
        Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["run", "--", python3.trim(), "-c", daemon])
        .current_dir(dir.path())
        // No `kill` program to be found: mldebug kills by the system call.
        .env("PATH", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let alive = || {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("time.sleep(1459)"))
                && std::fs::read_to_string(e.path().join("stat")).is_ok_and(|s| !s.contains(") Z "))
        })
    };
    assert!(
        eventually(Duration::from_secs(5), || !alive()),
        "the daemon outlived the run"
    );
}

#[test]
fn a_trace_path_the_program_filled_itself_is_kept_and_said_after_the_report() {
    if Command::new("python3").arg("-c").arg("1").status().is_err() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The run writes nothing mldebug keeps (no torch): what matters is that a path taken during
    // the run by the program is never replaced. Checked directly on the target.
    std::fs::write(dir.path().join("out.jsonl"), "").unwrap();
    let out = mldebug(
        dir.path(),
        &[
            "run",
            "--trace",
            "out.jsonl",
            "--",
            "python3",
            "-c",
            "open('out.jsonl', 'w').write('{\"mine\": 1}\\n')",
        ],
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap(),
        "{\"mine\": 1}\n"
    );
    assert!(
        !stderr(&out).contains("nothing was run"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_run_that_traced_nothing_says_how_far_it_got() {
    if Command::new("python3").arg("-c").arg("1").status().is_err() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (cmd, says) in [
        (vec!["true"], "no Python process loaded the probes"),
        (
            vec!["python3", "-c", "print(1)"],
            "1 Python process(es) started, none imported torch",
        ),
        // PYTHONPATH cleared inside a wrapper: the probes never load.
        (
            vec!["env", "-u", "PYTHONPATH", "python3", "-c", "print(1)"],
            "no Python process loaded the probes",
        ),
    ] {
        let mut args = vec!["run", "--"];
        args.extend(cmd.iter().copied());
        let out = mldebug(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{cmd:?}: {}", stderr(&out));
    }
}

#[test]
fn a_newline_in_a_trace_path_is_shown_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let out = mldebug(
        dir.path(),
        &["run", "--trace", "out\nsecond line.jsonl", "--", "true"],
    );
    let err = stderr(&out);
    assert!(err.contains("out\\nsecond line.jsonl"), "{err}");
    assert!(!err.contains("out\nsecond"), "{err}");
}
