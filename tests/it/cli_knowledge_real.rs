//! The knowledge commands on the real, embedded catalog: the few outputs where the real content
//! is the point (`mldebug quote rahtz`), and properties that must hold whatever the content.

use std::process::Command;

fn mldebug(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["--color", "never"])
        .args(args)
        .output()
        .expect("run mldebug");
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn quote_rahtz_prints_the_quotes_with_the_link() {
    let (code, text) = mldebug(&["quote", "rahtz"]);
    assert_eq!(code, 0);
    assert!(text.contains("Matthew Rahtz"));
    assert!(text.contains("http://amid.fish/reproducing-deep-rl"));
    assert!(text.contains("UNVERIFIED"), "unverified quotes say so");
    insta::assert_snapshot!(text);
    let (code, json) = mldebug(&["quote", "rahtz", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let quotes = v["quotes"].as_array().unwrap();
    assert_eq!(
        quotes.len(),
        text.matches("— Matthew Rahtz").count(),
        "the JSON holds the same quotes as the text"
    );
    assert!(quotes
        .iter()
        .all(|q| q["url"] == "http://amid.fish/reproducing-deep-rl"));
    insta::assert_json_snapshot!(v);
}

#[test]
fn every_named_author_is_found() {
    for who in [
        "rahtz", "karpathy", "bekman", "whitaker", "Karpathy", "jones",
    ] {
        let (code, json) = mldebug(&["quote", who, "--json"]);
        assert_eq!(code, 0, "{who}");
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert!(!v["quotes"].as_array().unwrap().is_empty(), "{who}");
    }
}

#[test]
fn every_quoted_excerpt_is_linked_to_an_entry() {
    let c = mldebug::catalog::embedded();
    for q in &c.quotes {
        assert!(q.excerpt.is_some(), "{}: unmatched quote", q.location);
        if q.location.file == "SKILL.md" {
            assert!(q.entry.is_some(), "{}: quote outside any entry", q.location);
        }
    }
}

#[test]
fn triage_answers_the_readme_example() {
    let (code, json) = mldebug(&["triage", "loss is exactly 0", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let first = &v["matches"][0];
    assert!(
        first["symptom"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("0"),
        "{first}"
    );
    assert!(first["commands"][0]
        .as_str()
        .unwrap()
        .starts_with("mldebug "));
    let (code, json) = mldebug(&["triage", "training diverges, loss is nan", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(
        v["matches"][0]["symptom"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("nan"),
        "{}",
        v["matches"][0]
    );
}

#[test]
fn every_check_has_a_section_and_shows() {
    for id in mldebug_diagnostics::CheckId::ALL {
        let (code, text) = mldebug(&["show", id.as_str()]);
        assert_eq!(code, 0, "{id}");
        assert!(
            text.contains(&format!("mldebug check {id} --model")),
            "{text}"
        );
        assert!(!text.contains("no refs/diagnostics.md section"), "{text}");
    }
}
