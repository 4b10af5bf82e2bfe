//! `mldebug demo`: every check over the whole zoo as one matrix, the expected verdict beside the
//! actual one; exit 0 only when all of them matched.

use std::process::Command;

fn mldebug(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the mldebug binary runs")
}

#[test]
fn the_demo_matrix_matches_every_expected_verdict() {
    let out = mldebug(&["demo"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(out.stderr.is_empty(), "no progress off a terminal");
    let last = text.lines().last().unwrap();
    let (n, m) = last
        .strip_suffix(" expected verdicts matched")
        .and_then(|s| s.split_once(" of "))
        .expect(last);
    assert_eq!(n, m, "{text}");
    for line in text.lines() {
        assert!(
            line.chars().count() <= 120,
            "wider than 120 columns: {line}"
        );
    }
    insta::assert_snapshot!("demo", text);
}

#[test]
fn demo_json_is_the_matrix() {
    let out = mldebug(&["demo", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let zoo: serde_json::Value =
        serde_json::from_slice(&mldebug(&["zoo", "--json"]).stdout).unwrap();
    let zoo = &zoo["models"];
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), zoo.as_array().unwrap().len());
    assert_eq!(v["matched"], v["expected"]);
    assert_eq!(v["errors"], 0);
    for (row, model) in rows.iter().zip(zoo.as_array().unwrap()) {
        assert_eq!(row["model"], model["name"]);
        let cells = row["cells"].as_array().unwrap();
        assert_eq!(cells.len(), mldebug_diagnostics::CheckId::ALL.len());
        for c in cells {
            let expected_fail = model["fails"].as_array().unwrap().contains(&c["check"]);
            match c["expected"].as_str() {
                Some("fail") => assert!(expected_fail, "{c}"),
                Some("no-fail") => assert!(model["clean"] == true && !expected_fail, "{c}"),
                None => assert!(model["clean"] == false && !expected_fail, "{c}"),
                other => panic!("unexpected `expected`: {other:?}"),
            }
        }
    }
}
