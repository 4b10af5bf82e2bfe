//! The PyTorch zoo matrix's live tier (`torch/zoo/zoo.json`): over 5 seeds, a clean model fails
//! no check (and errors in none), and a twin fails each check it breaks in at least 4 of the 5.
//! Each model and check runs once with `--seeds 0-4` (one driver process for the five seeds, as
//! a user would run it; `cli::a_run_over_several_seeds_measures_what_each_seed_alone_does`
//! shows that a seed's report is the same there as alone).
//!
//! What the driver measured is committed (see [`fixtures`]): a case whose fixture was
//! measured under today's key is replayed from it (the judge tier, `tests/it/torch_zoo_fixtures.rs`,
//! does the same without torch); a case whose key changed (the driver, its model or torch), or
//! whose request the binary no longer makes, is measured again, and the test fails until the
//! fixtures are blessed (`MLDEBUG_BLESS=1`). `MLDEBUG_TEST_FULL=1` or `MLDEBUG_TEST_RERUN=1`
//! measures every case.

use super::cache;
use super::support::python;
use super::torch_zoo::{self as fixtures, Case, BLESS};
use super::zoo_fixtures::{blessing, full};
use std::sync::Mutex;

/// Driver processes at once: two keep two cores busy.
const WORKERS: usize = 2;

/// What became of one case.
struct Outcome {
    problems: Vec<String>,
    /// Why its fixture is stale, when it is and was not blessed.
    stale: Option<&'static str>,
    measured: bool,
    blessed: bool,
    seconds: f64,
}

fn run(case: &Case, key: u64) -> Outcome {
    let started = std::time::Instant::now();
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let kept = scratch.path().join("kept.jsonl");
    let current = case.fixture_key() == Some(key);
    let live = !current || full() || !cache::enabled();
    if !live {
        std::fs::copy(case.fixture(), &kept).expect("copy the fixture");
    }
    let out = case.check(&kept, python());
    let (mut problems, _) = case.verdict(&out);
    let measured = fixtures::measured_now(&kept);
    let stale = if !case.fixture().is_file() {
        Some("missing")
    } else if !current {
        Some("measured with another driver, model or torch")
    } else if !live && measured {
        // A current fixture the binary did not replay answers another request (a new default).
        Some("measured for another request than the binary makes now")
    } else {
        None
    };
    let mut blessed = false;
    if blessing() && (measured || stale.is_some()) {
        match case.bless(&kept, key) {
            Ok(()) => blessed = true,
            Err(e) => problems.push(format!("{}: not blessed: {e}", case.name)),
        }
    }
    Outcome {
        problems,
        stale: stale.filter(|_| !blessing()),
        measured,
        blessed,
        seconds: started.elapsed().as_secs_f64(),
    }
}

#[test]
fn clean_models_fail_nothing_and_twins_fail_what_they_break() {
    let versions = fixtures::versions(python());
    let cases = fixtures::cases();
    let queue = Mutex::new(cases.iter().rev().collect::<Vec<_>>());
    let outcomes = Mutex::new(Vec::<(String, Outcome)>::new());
    std::thread::scope(|s| {
        for _ in 0..WORKERS {
            s.spawn(|| loop {
                let Some(case) = queue.lock().unwrap().pop() else {
                    break;
                };
                let outcome = run(case, case.key(&versions));
                outcomes.lock().unwrap().push((case.name.clone(), outcome));
            });
        }
    });
    let mut outcomes = outcomes.into_inner().unwrap();
    outcomes.sort_by(|a, b| a.0.cmp(&b.0));
    let measured: Vec<String> = outcomes
        .iter()
        .filter(|o| o.1.measured)
        .map(|o| format!("{} ({:.0} s)", o.0, o.1.seconds))
        .collect();
    println!(
        "{} cases, {} measured: {}",
        outcomes.len(),
        measured.len(),
        measured.join(", ")
    );
    let blessed: Vec<&str> = outcomes
        .iter()
        .filter(|o| o.1.blessed)
        .map(|o| o.0.as_str())
        .collect();
    if !blessed.is_empty() {
        println!(
            "blessed {} fixture(s): {}",
            blessed.len(),
            blessed.join(", ")
        );
    }
    let stale: Vec<String> = outcomes
        .iter()
        .filter_map(|o| o.1.stale.map(|why| format!("  {}: {why}", o.0)))
        .collect();
    let mut problems: Vec<String> = outcomes.into_iter().flat_map(|o| o.1.problems).collect();
    if !stale.is_empty() {
        problems.push(format!(
            "{} fixture(s) in tests/fixtures/torch_zoo are stale:\n{}\n{BLESS}",
            stale.len(),
            stale.join("\n")
        ));
    }
    // A fixture of no case (a model renamed or taken out of the zoo): removed by a bless.
    for path in fixtures::fixtures() {
        if cases.iter().any(|c| c.fixture() == path) {
            continue;
        }
        if blessing() {
            let _ = std::fs::remove_file(&path);
        } else {
            problems.push(format!("{}: no case of that name: {BLESS}", path.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
