//! The PyTorch zoo's judge tier, no torch needed: every committed driver run
//! (`tests/fixtures/torch_zoo/`, see `tests/support/torch_zoo.rs`) replayed through
//! `mldebug check` (`MLDEBUG_TORCH_REPLAY` naming the fixture; no Python starts), its verdicts
//! held to the zoo's rule (a clean model fails no check and errs in none on any of the 5 seeds,
//! a twin fails the check it breaks on at least 4) and to a snapshot of every check's status
//! per seed.

use crate::torch_zoo::{self as fixtures, BLESS};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The interpreter the replays are given: none, so a fixture the binary will not replay (kept
/// for another request) fails here rather than being measured and written over.
fn no_python() -> std::path::PathBuf {
    crate::support::repo().join("target/no-python-in-the-judge-tier")
}

#[test]
fn every_case_has_one_fixture_and_every_fixture_a_case() {
    let cases = fixtures::cases();
    let mut problems = Vec::new();
    for c in &cases {
        if !c.fixture().is_file() {
            problems.push(format!("{}: no fixture", c.name));
        }
    }
    for path in fixtures::fixtures() {
        if !cases.iter().any(|c| c.fixture() == path) {
            problems.push(format!("{}: no case of that name", path.display()));
        }
    }
    assert!(problems.is_empty(), "{BLESS}\n{}", problems.join("\n"));
}

#[test]
fn every_fixture_replayed_is_judged_as_the_zoo_expects() {
    let cases = fixtures::cases();
    let queue = Mutex::new(cases.iter().collect::<Vec<_>>());
    let results = Mutex::new(BTreeMap::<String, (Vec<String>, String)>::new());
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| loop {
                let Some(case) = queue.lock().unwrap().pop() else {
                    break;
                };
                let fixture = case.fixture();
                let result = if fixture.is_file() {
                    let out = case.check(&fixture, &no_python());
                    let (mut problems, table) = case.verdict(&out);
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    if stderr.contains(&*no_python().to_string_lossy()) {
                        problems.push(format!(
                            "{}: the fixture was not replayed: it answers another request than \
                             the binary makes now: {BLESS}",
                            case.name
                        ));
                    }
                    (problems, table)
                } else {
                    (
                        vec![format!("{}: no fixture: {BLESS}", case.name)],
                        String::new(),
                    )
                };
                results.lock().unwrap().insert(case.name.clone(), result);
            });
        }
    });
    let results = results.into_inner().unwrap();
    let mut problems = Vec::new();
    let mut table = String::new();
    for case in &cases {
        let (p, t) = &results[&case.name];
        problems.extend(p.iter().cloned());
        table.push_str(t);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    insta::assert_snapshot!("torch_zoo_verdicts", table);
}
