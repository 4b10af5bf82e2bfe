//! `mldebug run`'s command line with a real Python: what it refuses (exit 2), a program that
//! raises (exit 4, the trace so far judged), one that never steps (not a pass), the step limit,
//! the time limit, `--trace` judged again by `doctor`, the user's folder left as it was, and
//! numerics unchanged by the probes.

use super::support::{json_doc, python, schema_errors, with_escalating_timeout};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A small deterministic training loop; `{steps}` optimizer steps, then `{tail}`.
const LOOP: &str = r#"
import sys, torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(32, 8); y = torch.randint(0, 3, (32,))
for step in range({steps}):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.10f}", flush=True)
{tail}
"#;

fn script(dir: &Path, name: &str, steps: u64, tail: &str) -> String {
    let text = LOOP
        .replace("{steps}", &steps.to_string())
        .replace("{tail}", tail);
    std::fs::write(dir.join(name), text).unwrap();
    name.to_string()
}

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(args)
        .env("NO_COLOR", "1")
        .current_dir(dir)
        .output()
        .expect("run mldebug")
}

fn py() -> String {
    python().display().to_string()
}

/// The `--json` document, validated against the output schema.
fn doc(out: &Output) -> serde_json::Value {
    let doc = json_doc(out);
    let errors = schema_errors(&doc);
    assert!(errors.is_empty(), "{errors:?}\n{doc}");
    doc
}

fn symptoms(d: &serde_json::Value) -> Vec<String> {
    d["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["symptom"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn commands_that_cannot_be_watched_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = run(d, &["run", "--", "no-such-command-here", "x.py"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such command"));
    let s = script(d, "t.py", 3, "");
    let out = run(d, &["run", "--", &py(), "-S", &s]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Python without torch training, and not Python at all: nothing to judge.
    for cmd in [
        vec![py(), "-c".into(), "print(1)".into()],
        vec!["true".to_string()],
    ] {
        let mut args = vec!["run".to_string(), "--".into()];
        args.extend(cmd);
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(d, &a);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{a:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was observed"));
    }
}

#[test]
fn a_program_that_raises_is_exit_4_with_its_error_and_the_steps_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let s = script(
        dir.path(),
        "t.py",
        3,
        "raise ValueError('the data ran out')",
    );
    let out = run(dir.path(), &["--json", "run", "--", &py(), &s]);
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d = doc(&out);
    let f = d["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["symptom"] == "run-error")
        .unwrap();
    assert!(
        f["summary"]
            .as_str()
            .unwrap()
            .contains("ValueError: the data ran out"),
        "{f}"
    );
    assert_eq!(d["processes"][0]["steps"], 3);
}

#[test]
fn a_program_that_never_steps_is_not_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let s = script(dir.path(), "t.py", 0, "print(model(x).sum().item())");
    let out = run(dir.path(), &["--json", "run", "--", &py(), &s]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(symptoms(&doc(&out)).contains(&"no-optimizer-step".to_string()));
}

#[test]
fn the_run_ends_after_the_steps_watched_and_the_trace_is_judged_again_by_doctor() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = script(d, "t.py", 10_000, "");
    let before: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let out = run(
        d,
        &[
            "--json",
            "run",
            "--steps",
            "7",
            "--trace",
            "trace.jsonl",
            "--",
            &py(),
            &s,
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = doc(&out);
    assert_eq!(first["processes"][0]["steps"], 7);
    assert_eq!(first["outcome"]["how"], "stopped");
    // The program's own prints went to stderr (stdout holds the JSON document alone).
    let err = String::from_utf8_lossy(&out.stderr);
    // The 7th step ends the program inside optimizer.step(), before its print.
    assert!(err.contains("step 5 loss"), "{err}");
    assert!(!err.contains("step 6 loss"), "{err}");
    let mut after: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    after.retain(|n| n != "trace.jsonl");
    assert_eq!(
        before, after,
        "nothing but the trace written into the user's folder"
    );
    let again = run(d, &["--json", "doctor", "trace.jsonl"]);
    let again = doc(&again);
    let rejudged: Vec<String> = again["runs"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["symptom"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(rejudged, symptoms(&first));
}

#[test]
fn the_time_limit_ends_the_whole_program_and_judges_the_steps_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let s = script(
        dir.path(),
        "t.py",
        5,
        // A helper in the program's group, and one in a session of its own.
        "import subprocess, time\nsubprocess.Popen(['sleep', '120'])\n\
         subprocess.Popen(['sleep', '117'], start_new_session=True)\ntime.sleep(120)",
    );
    // The program would sleep 120 s; the assertions need a run that reached its sleep (torch
    // imported, five steps) before the limit ended it (`with_escalating_timeout`).
    let (d, _) = with_escalating_timeout(|timeout| {
        let started = Instant::now();
        let out = run(
            dir.path(),
            &[
                "--json",
                "run",
                "--steps",
                "0",
                "--timeout",
                &timeout.to_string(),
                "--",
                &py(),
                &s,
            ],
        );
        let elapsed = started.elapsed();
        assert!(
            elapsed < Duration::from_secs(timeout + 30),
            "{elapsed:?} with --timeout {timeout}"
        );
        // A run that reached its limit is told from a clean one by its exit code.
        assert_eq!(out.status.code(), Some(124));
        let d = doc(&out);
        let stepped = d["processes"][0]["steps"] == 5;
        (d, stepped)
    });
    assert_eq!(d["outcome"]["how"], "timed_out");
    assert_eq!(d["processes"][0]["steps"], 5);
    assert!(
        !sleeping(117),
        "the helper in its own session outlived the run"
    );
}

/// Whether a `sleep SECONDS` process is alive (read from /proc).
fn sleeping(seconds: u32) -> bool {
    let want = format!("sleep\0{seconds}\0");
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten().any(|e| {
                std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == want.as_bytes())
            })
        })
        .unwrap_or(false)
}

#[test]
fn the_probes_change_no_number_the_program_computes() {
    // Nor its environment: the thread count the binary pins for candle is not the user's.
    let dir = tempfile::tempdir().unwrap();
    let s = script(
        dir.path(),
        "t.py",
        20,
        "import os\nprint('step env', os.environ.get('RAYON_NUM_THREADS'), flush=True)",
    );
    let plain = Command::new(python())
        .arg(&s)
        .current_dir(dir.path())
        .env_remove("RAYON_NUM_THREADS")
        .output()
        .unwrap();
    assert!(plain.status.success());
    let watched = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["run", "--steps", "0", "--", &py(), &s])
        .env("NO_COLOR", "1")
        .env_remove("RAYON_NUM_THREADS")
        .current_dir(dir.path())
        .output()
        .expect("run mldebug");
    assert!(
        watched.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&watched.stderr)
    );
    let losses = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("step "))
            .map(String::from)
            .collect()
    };
    let plain = losses(&String::from_utf8_lossy(&plain.stdout));
    assert_eq!(plain.len(), 21);
    assert_eq!(plain[20], "step env None");
    assert_eq!(losses(&String::from_utf8_lossy(&watched.stdout)), plain);
}

/// A loop of 10,000 steps without a DataLoader that evaluates after step 40; `{zero}` resets
/// the gradients or not.
const CYCLE: &str = r#"
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(32, 8); y = torch.randint(0, 3, (32,))
for step in range(1, 10001):
    {zero}
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    if step % 40 == 0:
        model.eval()
        with torch.no_grad():
            print(f"step {step} eval loss {torch.nn.functional.cross_entropy(model(x), y).item():.4f}")
        model.train()
"#;

#[test]
fn the_default_window_is_one_cycle_and_a_fail_in_the_first_steps_ends_it_at_the_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    for (name, zero) in [("clean.py", "opt.zero_grad()"), ("bug.py", "pass")] {
        std::fs::write(dir.path().join(name), CYCLE.replace("{zero}", zero)).unwrap();
    }
    let out = run(dir.path(), &["--json", "run", "--", &py(), "clean.py"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d = doc(&out);
    assert_eq!(d["window"]["rule"], "cycle");
    assert_eq!(d["steps_limit"], 1000);
    let p = &d["processes"][0];
    // No training loader: the first evaluation (after step 40) ends the cycle at step 41.
    assert_eq!(
        (&p["window_end"], &p["first_evaluation"]),
        (&"cycle".into(), &41.into())
    );
    assert_eq!(p["steps"], 41);
    let out = run(dir.path(), &["--json", "run", "--", &py(), "bug.py"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d = doc(&out);
    let p = &d["processes"][0];
    assert_eq!(
        (&p["window_end"], &p["steps"]),
        (&"verdict".into(), &30.into())
    );
    assert!(
        symptoms(&d).contains(&"grads-accumulate".to_string()),
        "{d}"
    );
    let text = run(dir.path(), &["run", "--", &py(), "bug.py"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("ended at step 30: the first steps already hold a fail"),
        "{text}"
    );
}
