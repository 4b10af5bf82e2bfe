//! `doctor --watch` on hostile input, each run held to a time bound: a tqdm bar redrawn with
//! `\r` and no newline yet, a log rewritten while watched (larger, or the same size), folders and
//! globs with self-links, input that is never readable (corrupt JSON, a FIFO, /dev/zero, a text
//! file with no training line), and `--idle-timeout` values that are not a duration.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Far beyond what these take (a second or two of watching), far below a hang.
const BOUND: Duration = Duration::from_secs(30);

/// How long the watch is left to read a file before it is changed: three polls.
const SETTLE: Duration = Duration::from_millis(1500);

fn spawn(args: &[&str], paths: &[&Path]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(args)
        .args(paths)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child`, killed (and the test failed) past [`BOUND`].
fn finish(mut child: Child, what: &str) -> (i32, String, String) {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > BOUND {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what}: still running after {BOUND:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let Output {
        status,
        stdout,
        stderr,
    } = child.wait_with_output().unwrap();
    (
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

fn watch(args: &[&str], paths: &[&Path]) -> (i32, String, String) {
    let child = spawn(&[&["doctor", "--watch"], args].concat(), paths);
    finish(child, &format!("doctor --watch {args:?} {paths:?}"))
}

fn bar(n: usize, loss: &str) -> String {
    format!("Epoch 0:  {n:>2}%|█         | {n}/100 [00:01<00:09, 9.0it/s, loss={loss}]\r")
}

#[test]
fn a_nan_in_a_bar_not_yet_ended_by_a_newline_fails_as_plain_doctor_does() {
    let t = tempfile::tempdir().unwrap();
    let log = t.path().join("train.log");
    let text: String = (1..=20)
        .map(|n| bar(n, &format!("{:.3}", 2.3 - 0.01 * n as f64)))
        .chain([bar(21, "nan")])
        .collect();
    std::fs::write(&log, text).unwrap();
    let (plain, out, _) = finish(spawn(&["doctor"], &[&log]), "doctor");
    assert_eq!(plain, 1, "{out}");
    let (code, out, err) = watch(&["--idle-timeout", "1"], &[&log]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("fail loss-nonfinite at step 21"), "{out}");
    // And as it is drawn: --fail-on stops at the redraw, with no newline ever written.
    let growing = t.path().join("growing.log");
    let mut f = std::fs::File::create(&growing).unwrap();
    f.write_all(bar(1, "2.3").as_bytes()).unwrap();
    let child = spawn(
        &[
            "doctor",
            "--watch",
            "--fail-on",
            "fail",
            "--idle-timeout",
            "20",
        ],
        &[&growing],
    );
    std::thread::sleep(SETTLE);
    f.write_all(bar(2, "nan").as_bytes()).unwrap();
    let (code, out, err) = finish(child, "growing bar");
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("at step 2"), "{out}");
}

/// Watches `name` holding `before`, rewrites it in place with `after`, and returns what the
/// watch said (it stops at the first fail finding, or 2 s after the last change).
fn rewrite_while_watched(name: &str, before: &str, after: &str) -> (i32, String, String) {
    let t = tempfile::tempdir().unwrap();
    let log = t.path().join(name);
    std::fs::write(&log, before).unwrap();
    let child = spawn(
        &[
            "doctor",
            "--watch",
            "--fail-on",
            "fail",
            "--idle-timeout",
            "3",
        ],
        &[&log],
    );
    std::thread::sleep(SETTLE);
    // Truncated and written again through the same inode, as `>` in a shell does.
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&log)
        .unwrap();
    f.write_all(after.as_bytes()).unwrap();
    drop(f);
    finish(child, name)
}

fn steps(range: std::ops::RangeInclusive<usize>, loss: &dyn Fn(usize) -> String) -> String {
    range
        .map(|s| format!("step {s} | loss {}\n", loss(s)))
        .collect()
}

#[test]
fn a_log_rewritten_larger_is_read_again_from_the_start() {
    let old = steps(1..=30, &|s| format!("{:.4}", 2.3 - 0.01 * s as f64));
    // The new run is NaN at step 3, within the bytes the old run had: read from the old
    // offset, the watch would miss it and mix the two runs' points.
    let new = steps(1..=60, &|s| {
        if s == 3 {
            "nan".into()
        } else {
            format!("{:.4}", 2.0 - 0.01 * s as f64)
        }
    });
    assert!(new.len() > old.len());
    let (code, out, err) = rewrite_while_watched("train.log", &old, &new);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("fail loss-nonfinite at step 3"), "{out}");
    assert!(err.contains("was rewritten"), "{err}");
}

#[test]
fn a_log_rewritten_at_the_same_size_is_seen() {
    let old = steps(1..=30, &|s| format!("{:.4}", 2.3 - 0.01 * s as f64));
    let new = steps(1..=30, &|s| {
        if s == 3 {
            "nan   ".into()
        } else {
            format!("{:.4}", 2.3 - 0.01 * s as f64)
        }
    });
    assert_eq!(new.len(), old.len());
    let (code, out, err) = rewrite_while_watched("train.log", &old, &new);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("fail loss-nonfinite at step 3"), "{out}");
    let jsonl = |s: usize, v: &str| format!("{{\"step\": {s:>2}, \"loss\": {v:<5}}}\n");
    let loss = |s: usize| format!("{:.3}", 2.3 - 0.01 * s as f64);
    let old: String = (1..=30).map(|s| jsonl(s, &loss(s))).collect();
    let new: String = (1..=30)
        .map(|s| jsonl(s, &if s == 3 { "NaN".into() } else { loss(s) }))
        .collect();
    assert_eq!(new.len(), old.len());
    let (code, out, err) = rewrite_while_watched("m.jsonl", &old, &new);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("fail loss-nonfinite at step 3"), "{out}");
}

#[cfg(unix)]
fn self_linked_folder(dir: &Path) {
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::os::unix::fs::symlink(".", dir.join("l1")).unwrap();
    std::os::unix::fs::symlink(".", dir.join("l2")).unwrap();
    std::os::unix::fs::symlink("..", dir.join("sub/up")).unwrap();
    let run = |g: &str, s: usize, v: f64| {
        format!("{{\"name\": \"{g}{s}\", \"group\": \"{g}\", \"seed\": {s}, \"metrics\": {{\"acc\": {v}}}}}\n")
    };
    let mut runs = String::new();
    for s in 0..3 {
        runs.push_str(&run("a", s, 0.8 + 0.01 * s as f64));
        runs.push_str(&run("b", s, 0.7 + 0.01 * s as f64));
    }
    std::fs::write(dir.join("sub/runs.jsonl"), runs).unwrap();
    std::fs::write(
        dir.join("m.jsonl"),
        "{\"step\": 1, \"loss\": 1.0}\n{\"step\": 2, \"loss\": 0.5}\n",
    )
    .unwrap();
}

#[test]
#[cfg(unix)]
fn self_links_are_walked_once_by_the_watch_globs_and_folder_walks() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("runs");
    self_linked_folder(&d);
    let (code, out, err) = watch(&["--idle-timeout", "1"], &[&d]);
    assert_eq!(code, 0, "{out}{err}");
    let pattern = format!("{}/**/*.jsonl", d.display());
    let (code, out, err) = finish(
        spawn(&["doctor", "--json", &pattern], &[]),
        "doctor over a glob",
    );
    assert!(code == 0 || code == 1, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // m.jsonl is one run, sub/runs.jsonl six: each real file once.
    assert_eq!(v["runs"].as_array().unwrap().len(), 7, "{out}");
    let arms = [
        "--metric",
        "acc",
        "--group-by",
        "group",
        "--a",
        "a",
        "--b",
        "b",
    ];
    let pattern = format!("{}/**/runs.jsonl", d.display());
    let (code, out, err) = finish(
        spawn(
            &[&["sweep-compare", "--json", &pattern][..], &arms].concat(),
            &[],
        ),
        "sweep-compare over a glob",
    );
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["tasks"][0]["a"]["values"].as_array().unwrap().len(),
        3,
        "{out}"
    );
    let (code, out, err) = finish(
        spawn(
            &[&["sweep-compare", "--json"][..], &arms].concat(),
            &[&d.join("sub")],
        ),
        "sweep-compare over the folder",
    );
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["tasks"][0]["a"]["values"].as_array().unwrap().len(),
        3,
        "{out}"
    );
}

#[test]
#[cfg(unix)]
fn input_that_is_never_readable_ends_the_watch_with_exit_2_and_the_reason() {
    let t = tempfile::tempdir().unwrap();
    let corrupt = t.path().join("bad.jsonl");
    std::fs::write(&corrupt, "{\"step\": 1, \"loss\": ").unwrap();
    let binary = t.path().join("zeros.log");
    std::fs::write(&binary, vec![0u8; 1 << 16]).unwrap();
    let fifo = t.path().join("pipe");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for (path, reason) in [
        (corrupt.as_path(), "line 1"),
        (binary.as_path(), "no training-log line recognised"),
        (fifo.as_path(), "not a regular file"),
        (Path::new("/dev/zero"), "not a regular file"),
    ] {
        let (code, out, err) = watch(&["--idle-timeout", "1"], &[path]);
        assert_eq!(code, 2, "{}: {out}{err}", path.display());
        assert!(err.contains(reason), "{}: {err}", path.display());
        assert!(err.contains(&path.display().to_string()), "{err}");
    }
}

#[test]
fn an_idle_timeout_that_is_not_a_duration_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let log = t.path().join("train.log");
    std::fs::write(&log, "step 1 | loss 1.0\n").unwrap();
    for v in ["NaN", "inf", "-inf", "-1", "1e300", "abc", ""] {
        let arg = format!("--idle-timeout={v}");
        let (code, out, err) = watch(&[&arg], &[&log]);
        assert_eq!(code, 2, "{v}: {out}{err}");
        assert!(err.contains("--idle-timeout"), "{v}: {err}");
    }
    let (code, _, err) = watch(&["--idle-timeout=0.5"], &[&log]);
    assert_eq!(code, 0, "{err}");
}
