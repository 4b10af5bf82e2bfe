//! Every evidence excerpt equals its record in the frozen quote records (text and status).
//! The records live in `shared/sources/quotes.yaml` beside the repository (`../shared/...` from
//! the repository root) or where `MLDEBUG_QUOTE_RECORDS` points; without them the test says so
//! and checks nothing else.

use std::path::PathBuf;

fn records_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MLDEBUG_QUOTE_RECORDS") {
        return Some(PathBuf::from(p));
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/sources/quotes.yaml");
    p.is_file().then_some(p)
}

#[test]
fn evidence_excerpts_equal_their_records() {
    let Some(path) = records_path() else {
        eprintln!("quote records not found beside the repository; skipping the comparison");
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap();
    let c = mldebug::catalog::embedded();
    let problems = mldebug::catalog::records::compare(c, &text).unwrap();
    let lines: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    assert!(lines.is_empty(), "{}", lines.join("\n"));
}

#[test]
fn fixture_excerpts_equal_their_records() {
    let Some(path) = records_path() else { return };
    let text = std::fs::read_to_string(&path).unwrap();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/catalog");
    let c = mldebug::catalog::from_dir(&dir).unwrap();
    assert!(mldebug::catalog::records::compare(&c, &text)
        .unwrap()
        .is_empty());
    // And a changed excerpt is caught.
    let mut changed = c.clone();
    changed.sources[0].excerpts[0].text.push('!');
    let p = mldebug::catalog::records::compare(&changed, &text).unwrap();
    assert_eq!(p.len(), 1, "{p:?}");
}
