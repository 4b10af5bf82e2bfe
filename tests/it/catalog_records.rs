//! Every evidence excerpt equals its record in the frozen quote records (text and status).
//! The records are kept in the repository (`tests/fixtures/quote_records.yaml`, a copy of the
//! frozen set), so the comparison runs on every clone; `MLDEBUG_QUOTE_RECORDS` points at
//! another copy. Where the original set sits beside the repository (`../shared/sources/`), the
//! kept copy must equal it byte for byte.

use std::path::PathBuf;

fn kept_copy() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quote_records.yaml")
}

fn records_path() -> Option<PathBuf> {
    Some(std::env::var_os("MLDEBUG_QUOTE_RECORDS").map_or_else(kept_copy, PathBuf::from))
}

#[test]
fn the_kept_records_equal_the_frozen_set_where_it_is_present() {
    let original = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/sources/quotes.yaml");
    let kept = std::fs::read(kept_copy()).expect("tests/fixtures/quote_records.yaml");
    assert!(!kept.is_empty());
    if let Ok(frozen) = std::fs::read(&original) {
        assert!(
            frozen == kept,
            "tests/fixtures/quote_records.yaml differs from {}",
            original.display()
        );
    }
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
