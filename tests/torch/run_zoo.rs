//! The run zoo's live tier (`torch/run_zoo/manifest.json`): practitioners' training scripts,
//! each bug with a fixed twin, watched by `mldebug run`. A buggy script must be reported with
//! the finding meant for it; a clean one (a fixed twin, or a clean script of another shape) must
//! have no finding of severity fail.
//!
//! What is watched (see [`zoo_fixtures`]): by default, the programs whose committed fixture was
//! watched under another key (the probes or the program changed: the test then fails until the
//! fixtures are blessed with `MLDEBUG_BLESS=1`), and the [`SMOKE`] sample every time; with
//! `MLDEBUG_TEST_FULL=1`, every program on every seed of [`SEEDS`]. Every fixture is judged
//! without torch by the judge tier (`tests/it/run_zoo_fixtures.rs`).

use super::cache;
use super::support::{python, repo};
use super::zoo_fixtures::{self, Entry};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// What a watched script's trace depends on besides its command and seed: the scripts, the
/// probes and their bootstrap (what the binary embeds from `torch/run`), and the launcher (see
/// [`cache`]). The probes' own tests and `TRACE.md` are not in it: a change to a probe's test
/// does not watch the zoo again ([`NOT_MEASURED_BY`] keeps this list whole).
const MEASURED_BY: &[&str] = &[
    "torch/run_zoo",
    "torch/run/mldebug_run",
    "torch/run/sitecustomize.py",
    "src/run",
    "src/commands/run.rs",
    "src/child_process.rs",
    "src/child_process",
];

/// What in `torch/run` no trace depends on. Everything else there must be in [`MEASURED_BY`]:
/// something new fails [`the_run_folder_holds_only_what_the_key_accounts_for`] until it is
/// placed in one or the other.
const NOT_MEASURED_BY: &[&str] = &["torch/run/tests", "torch/run/TRACE.md"];

/// Seeds each script runs with in the full tier (`MLDEBUG_TEST_FULL=1`); the fixtures and the
/// default tier use [`zoo_fixtures::SEED`].
const SEEDS: [u64; 2] = [0, 1];
/// Programs watched live on every run, whatever their fixtures: each way a program is started
/// must work on this machine (a plain script, `python -m`, `torchrun` with two ranks, a loop
/// written with Accelerate).
const SMOKE: &[&str] = &[
    "mlp_classifier",
    "textcls",
    "ddp_sampler",
    "clean_accelerate",
];
/// Scripts run at once. On two cores, three keep both busy while a script waits (a launcher
/// starting its ranks, ranks meeting, a loader that sleeps): the zoo alone, uncached, took
/// 456 s with three and 565 s with two.
const WORKERS: usize = 3;

struct Job {
    entry: Entry,
    command: Vec<String>,
    seed: u64,
    /// Its fixture was watched under another key: what is watched now should be blessed.
    stale: bool,
    /// Watched whatever is kept (the smoke sample).
    live: bool,
}

impl Job {
    fn of(entry: &Entry, seed: u64, stale: bool, live: bool) -> Job {
        Job {
            command: entry.command(seed),
            entry: entry.clone(),
            seed,
            stale,
            live,
        }
    }
}

/// What this run watches: see the module docs. `MLDEBUG_ZOO_ONLY=a,b` keeps the programs named
/// (to bless or watch a few while working on them).
fn jobs() -> Vec<Job> {
    let only: Option<Vec<String>> = std::env::var("MLDEBUG_ZOO_ONLY")
        .ok()
        .filter(|v| !v.is_empty())
        .map(|v| v.split(',').map(|n| n.trim().to_string()).collect());
    let mut jobs = Vec::new();
    for e in zoo_fixtures::entries() {
        if only.as_ref().is_some_and(|o| !o.contains(&e.name)) {
            continue;
        }
        let stale = !e.is_current();
        if zoo_fixtures::full() {
            jobs.extend(SEEDS.iter().map(|&s| Job::of(&e, s, stale, true)));
        } else if stale || SMOKE.contains(&e.name.as_str()) {
            jobs.push(Job::of(&e, zoo_fixtures::SEED, stale, !stale));
        }
    }
    jobs
}

/// `python` and `torchrun` in a manifest command are the test venv's.
fn resolve(word: &str) -> String {
    let bin = python().parent().expect("the venv's bin folder");
    match word {
        "python" => python().display().to_string(),
        "torchrun" | "accelerate" => bin.join(word).display().to_string(),
        w => w.to_string(),
    }
}

/// Where this job's trace is kept: named by the job and a hash of everything it depends on.
fn kept_trace(job: &Job, inputs: u64) -> PathBuf {
    let key = format!(
        "{inputs:016x} {} {} {:?}",
        job.entry.steps, job.seed, job.command
    );
    cache::dir("run-zoo").join(format!(
        "{}-seed{}-{:016x}.jsonl",
        job.entry.name,
        job.seed,
        mldebug_text::hash::fnv1a(key.as_bytes())
    ))
}

/// Every finding (symptom, severity, first step), the document, and the trace when the run was judged
/// to its end: the job watched by `mldebug run`, or its trace kept on this machine judged again
/// by `mldebug doctor` when nothing it depends on changed (never for a [`Job::live`] job).
type Watched = (Vec<Seen>, String, Option<Vec<u8>>);

/// A finding as the zoo reads it: id, severity, the first step it names.
type Seen = (String, String, Option<f64>);

fn watch(job: &Job, inputs: u64) -> Watched {
    let kept = kept_trace(job, inputs);
    if !job.live && cache::enabled() && kept.is_file() {
        let (findings, doc) = judge_again(job, &kept);
        return (findings, doc, std::fs::read(&kept).ok());
    }
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let trace = scratch.path().join("trace.jsonl");
    let mut args = vec![
        "--json".to_string(),
        "run".into(),
        "--steps".into(),
        job.entry.steps.clone(),
        "--timeout".into(),
        "300".into(),
        "--trace".into(),
        trace.display().to_string(),
        "--".into(),
    ];
    args.extend(job.command.iter().map(|w| resolve(w)));
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(&args)
        .env("NO_COLOR", "1")
        .env("OMP_NUM_THREADS", "1")
        .current_dir(repo().join("torch/run_zoo"))
        .output()
        .expect("run mldebug");
    let (findings, stdout, doc) = findings_of(job, &out, |d| d);
    // Only a run judged to the end is kept (exit 0 or 1; stopped at the step limit, or ended
    // on its own): never one cut by the time limit or an error, unless the program's bug is
    // the error (the manifest's `raises`: it failed on its own, exit 4, and was judged).
    let how = &doc["outcome"]["how"];
    let whole = (matches!(out.status.code(), Some(0 | 1)) && (how == "stopped" || how == "exited"))
        || (job.entry.raises.is_some() && out.status.code() == Some(4) && how == "failed");
    if whole {
        cache::keep(&trace, &kept);
    }
    let bytes = whole.then(|| std::fs::read(&trace).ok()).flatten();
    (findings, stdout, bytes)
}

/// The kept trace judged by the binary under test.
fn judge_again(job: &Job, kept: &Path) -> (Vec<Seen>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["--json", "doctor"])
        .arg(kept)
        .env("NO_COLOR", "1")
        .output()
        .expect("run mldebug doctor");
    let (findings, stdout, _) = findings_of(job, &out, |d| &d["runs"][0]);
    (findings, stdout)
}

/// The findings of the report `report` picks from the document on stdout.
fn findings_of(
    job: &Job,
    out: &std::process::Output,
    report: impl Fn(&serde_json::Value) -> &serde_json::Value,
) -> (Vec<Seen>, String, serde_json::Value) {
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "{} seed {}: not JSON ({e}), exit {:?}\nstdout:\n{stdout}\nstderr:\n{}",
            job.entry.name,
            job.seed,
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let findings = report(&doc)["findings"]
        .as_array()
        .map(|fs| {
            fs.iter()
                .map(|f| {
                    (
                        f["symptom"].as_str().unwrap_or("").to_string(),
                        f["severity"].as_str().unwrap_or("").to_string(),
                        f["step"].as_f64(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    (findings, stdout, doc)
}

#[test]
fn the_run_folder_holds_only_what_the_key_accounts_for() {
    let found: std::collections::BTreeSet<String> = std::fs::read_dir(repo().join("torch/run"))
        .expect("torch/run")
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n != "__pycache__")
        .map(|n| format!("torch/run/{n}"))
        .collect();
    let accounted: std::collections::BTreeSet<String> = MEASURED_BY
        .iter()
        .chain(NOT_MEASURED_BY)
        .filter(|p| p.starts_with("torch/run/"))
        .map(|p| p.to_string())
        .collect();
    assert_eq!(
        found, accounted,
        "torch/run changed: what a trace depends on goes in MEASURED_BY, the rest in NOT_MEASURED_BY"
    );
}

#[test]
fn every_bug_is_caught_and_no_clean_script_fails() {
    let inputs = cache::inputs_hash(MEASURED_BY);
    let queue = Mutex::new(jobs());
    let problems = Mutex::new(Vec::<String>::new());
    let caught = Mutex::new(BTreeMap::<String, (usize, usize)>::new());
    let seconds = Mutex::new(Vec::<(f64, String)>::new());
    let blessed = Mutex::new(Vec::<String>::new());
    let matrix = Mutex::new(Matrix::new());
    std::thread::scope(|s| {
        for _ in 0..WORKERS {
            s.spawn(|| loop {
                let Some(job) = queue.lock().unwrap().pop() else {
                    break;
                };
                let started = std::time::Instant::now();
                let (found, doc, trace) = watch(&job, inputs);
                let name = &job.entry.name;
                matrix.lock().unwrap().note(&job, &found);
                seconds.lock().unwrap().push((
                    started.elapsed().as_secs_f64(),
                    format!("{name} seed {}", job.seed),
                ));
                if job.stale && job.seed == zoo_fixtures::SEED {
                    match (&trace, zoo_fixtures::blessing()) {
                        (Some(t), true) => {
                            job.entry.bless(t);
                            blessed.lock().unwrap().push(name.clone());
                        }
                        (None, true) => problems.lock().unwrap().push(format!(
                            "{name}: not blessed: the run did not end as a judged run\n{doc}"
                        )),
                        (_, false) => problems.lock().unwrap().push(format!(
                            "{name}: its fixture in tests/fixtures/run_zoo was watched with other \
                             probes or another program: bless the fixtures \
                             (MLDEBUG_BLESS=1 cargo test --test torch run_zoo)"
                        )),
                    }
                }
                let mut c = caught.lock().unwrap();
                let entry = c.entry(name.clone()).or_default();
                entry.1 += 1;
                let pairs: Vec<(String, String)> =
                    found.iter().map(|f| (f.0.clone(), f.1.clone())).collect();
                match job.entry.verdict(&pairs) {
                    None => entry.0 += 1,
                    Some(p) => problems
                        .lock()
                        .unwrap()
                        .push(format!("{p}: {name} seed {}\n{doc}", job.seed)),
                }
            });
        }
    });
    for (name, (ok, n)) in caught.lock().unwrap().iter() {
        println!("{name}: {ok}/{n} seeds as expected");
    }
    let blessed = blessed.into_inner().unwrap();
    if !blessed.is_empty() {
        println!(
            "blessed {} fixture(s): {}",
            blessed.len(),
            blessed.join(", ")
        );
    }
    // Where the time went (shown with --nocapture): the total and the slowest jobs.
    let mut seconds = seconds.into_inner().unwrap();
    seconds.sort_by(|a, b| b.0.total_cmp(&a.0));
    let total: f64 = seconds.iter().map(|s| s.0).sum();
    println!("{} jobs, {total:.0} s in all, the slowest:", seconds.len());
    for (secs, job) in seconds.iter().take(12) {
        println!("  {secs:6.1} s  {job}");
    }
    if zoo_fixtures::full() {
        println!("{}", matrix.into_inner().unwrap().table());
    }
    let problems = problems.into_inner().unwrap();
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

/// The variant matrix the full tier prints: for every finding a buggy program is meant for, each
/// program and seed, whether it was reported at warn or fail and from which step, beside what its
/// fixed twin got on the same seed.
struct Matrix {
    /// (program, seed) → every finding.
    seen: BTreeMap<(String, u64), Vec<Seen>>,
}

impl Matrix {
    fn new() -> Matrix {
        Matrix {
            seen: BTreeMap::new(),
        }
    }

    fn note(&mut self, job: &Job, found: &[Seen]) {
        self.seen
            .insert((job.entry.name.clone(), job.seed), found.to_vec());
    }

    /// A markdown table: finding, program, then per seed the program's result (`step S` where it
    /// was caught, `missed`) and its twin's (`clean`, or the fails it got).
    fn table(&self) -> String {
        let mut rows = Vec::new();
        for e in zoo_fixtures::entries().iter().filter(|e| !e.clean) {
            if !SEEDS
                .iter()
                .any(|&s| self.seen.contains_key(&(e.name.clone(), s)))
            {
                continue;
            }
            for id in &e.expect {
                let mut cells = vec![id.clone(), e.name.clone()];
                for seed in SEEDS {
                    let Some(found) = self.seen.get(&(e.name.clone(), seed)) else {
                        cells.push("not run".into());
                        continue;
                    };
                    let hits: Vec<&Seen> = found
                        .iter()
                        .filter(|f| &f.0 == id && (f.1 == "fail" || f.1 == "warn"))
                        .collect();
                    let first = hits.iter().filter_map(|f| f.2).reduce(f64::min);
                    cells.push(match (hits.is_empty(), first) {
                        (true, _) => "missed".into(),
                        (false, Some(step)) => format!("step {step}"),
                        (false, None) => "caught".into(),
                    });
                }
                let twin = e.twin_of.as_ref();
                for seed in SEEDS {
                    let cell = match twin.and_then(|t| self.seen.get(&(t.clone(), seed))) {
                        None => "-".to_string(),
                        Some(found) => {
                            let fails: Vec<_> = found
                                .iter()
                                .filter(|f| f.1 == "fail")
                                .map(|f| f.0.clone())
                                .collect();
                            if fails.is_empty() {
                                "clean".into()
                            } else {
                                format!("fail {}", fails.join(" "))
                            }
                        }
                    };
                    cells.push(cell);
                }
                rows.push(format!("| {} |", cells.join(" | ")));
            }
        }
        let mut warns = Vec::new();
        for e in zoo_fixtures::entries().iter().filter(|e| e.clean) {
            for seed in SEEDS {
                for f in self.seen.get(&(e.name.clone(), seed)).into_iter().flatten() {
                    if f.1 == "warn" {
                        warns.push(format!("{} seed {seed}: warn {}", e.name, f.0));
                    }
                }
            }
        }
        format!(
            "warnings on clean programs:\n{}\n\n\
             | finding | program | seed 0 | seed 1 | twin seed 0 | twin seed 1 |\n|---|---|---|---|---|---|\n{}",
            warns.join("\n"),
            rows.join("\n")
        )
    }
}
