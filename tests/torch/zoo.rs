//! The PyTorch zoo matrix (`torch/zoo/zoo.json`): over 5 seeds, a clean model fails no check
//! (and errors in none), and a twin fails each check it breaks in at least 4 of the 5. Each
//! model and check runs once with `--seeds 0-4` (one driver process for the five seeds, as a user
//! would run it; `cli::a_run_over_several_seeds_measures_what_each_seed_alone_does` shows that
//! a seed's report is the same there as alone). A rerun reads the driver's kept measurements
//! while the driver, the model's folder, the request and the interpreter are unchanged
//! (`MLDEBUG_TORCH_REPLAY`, src/torch/replay.rs, [`cache`]).

use super::cache;
use super::support::{json_doc, python, repo};
use std::process::Command;
use std::sync::Mutex;

const SEEDS: u64 = 5;
const TWIN_MIN_FAILS: usize = 4;

struct Job {
    model: String,
    args: Vec<String>,
    /// The check a twin must fail; `None` for a clean model (every check, none may fail).
    must_fail: Option<String>,
}

fn jobs() -> Vec<Job> {
    let text = std::fs::read_to_string(repo().join("torch/zoo/zoo.json")).unwrap();
    let zoo: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    let mut jobs = Vec::new();
    for m in &zoo {
        let name = m["name"].as_str().unwrap().to_string();
        let target = m["target"].as_str().unwrap();
        let spec = match target.strip_prefix("hf:") {
            Some(rest) => format!("hf:torch/zoo/{rest}"),
            None => format!("torch/zoo/{target}"),
        };
        let mut extra = vec!["--torch".to_string(), spec];
        if let Some(l) = m["lora"].as_str() {
            extra.extend(["--lora".to_string(), l.to_string()]);
        }
        let breaks: Vec<String> = m["breaks"]
            .as_array()
            .map(|b| b.iter().map(|c| c.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        let clean = m["clean"].as_bool().unwrap();
        assert!(
            clean == breaks.is_empty(),
            "{name}: a clean model breaks nothing, a twin something"
        );
        let checks = if clean {
            vec![None]
        } else {
            breaks.iter().cloned().map(Some).collect()
        };
        for check in checks {
            let mut args = vec!["--json".to_string(), "check".to_string()];
            args.push(check.clone().unwrap_or_else(|| "all".to_string()));
            args.extend(extra.iter().cloned());
            args.extend(["--seeds".to_string(), format!("0-{}", SEEDS - 1)]);
            jobs.push(Job {
                model: name.clone(),
                args,
                must_fail: check,
            });
        }
    }
    jobs
}

/// (model, check) -> how many seeds failed it; and the clean models' false alarms.
#[derive(Default)]
struct Tally {
    twin_fails: std::collections::BTreeMap<(String, String), Vec<u64>>,
    false_alarms: Vec<String>,
}

fn run(job: &Job, tally: &Mutex<Tally>) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mldebug"));
    command
        .args(&job.args)
        .env("MLDEBUG_PYTHON", python())
        .env("OMP_NUM_THREADS", "1")
        .current_dir(repo());
    // The driver's measurements are kept and read again while nothing that produced them
    // changed (src/torch/replay.rs); every verdict is judged anew by the binary under test.
    if cache::enabled() {
        command.env("MLDEBUG_TORCH_REPLAY", cache::dir("torch-zoo"));
    }
    let out = command.output().expect("run mldebug");
    let doc = json_doc(&out);
    let reports = doc["reports"].as_array().cloned().unwrap_or_default();
    let mut t = tally.lock().unwrap();
    if reports.len() != SEEDS as usize {
        t.false_alarms.push(format!(
            "{}: {} reports for {SEEDS} seeds:\n{doc}",
            job.model,
            reports.len()
        ));
        return;
    }
    for report in &reports {
        let seed = report["seed"].as_u64().expect("seed");
        let checks = report["checks"].as_array().cloned().unwrap_or_default();
        match &job.must_fail {
            None => {
                for c in &checks {
                    let status = c["status"].as_str().unwrap_or("");
                    if status == "fail" || status == "error" {
                        t.false_alarms.push(format!(
                            "{} seed {seed}: {} {status}: {}",
                            job.model, c["check"], c["summary"]
                        ));
                    }
                }
            }
            Some(check) => {
                let failed = checks
                    .iter()
                    .any(|c| c["check"] == check.as_str() && c["status"] == "fail");
                let e = t
                    .twin_fails
                    .entry((job.model.clone(), check.clone()))
                    .or_default();
                if failed {
                    e.push(seed);
                }
            }
        }
    }
}

#[test]
fn clean_models_fail_nothing_and_twins_fail_what_they_break() {
    let jobs = jobs();
    let tally = Mutex::new(Tally::default());
    let next = Mutex::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some(job) = jobs.get(i) else { break };
                run(job, &tally);
            });
        }
    });
    let t = tally.into_inner().unwrap();
    let mut problems = t.false_alarms.clone();
    let twins: std::collections::BTreeSet<(String, String)> = jobs
        .iter()
        .filter_map(|j| j.must_fail.clone().map(|c| (j.model.clone(), c)))
        .collect();
    for key in &twins {
        let seeds = t.twin_fails.get(key).cloned().unwrap_or_default();
        if seeds.len() < TWIN_MIN_FAILS {
            problems.push(format!(
                "{} must fail {} in at least {TWIN_MIN_FAILS} of {SEEDS} seeds; it failed in {:?}",
                key.0, key.1, seeds
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
