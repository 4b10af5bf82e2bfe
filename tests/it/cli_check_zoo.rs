//! `mldebug zoo`: the table, and `--json` as tools read it (every `name` usable as
//! `--model zoo::<name>`, `fails` empty exactly for the clean models).

use std::process::Command;

fn mldebug(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the mldebug binary runs")
}

#[test]
fn zoo_json_lists_every_model_with_what_must_fail() {
    let out = mldebug(&["zoo", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(v["command"], "zoo");
    let models = v["models"].as_array().expect("a list of models");
    assert!(models.len() >= 4, "{v}");
    for m in models {
        let clean = m["clean"].as_bool().expect("clean is a bool");
        let fails = m["fails"].as_array().expect("fails is a list");
        assert_eq!(clean, fails.is_empty(), "{m}");
        assert_eq!(clean, m["twin_of"].is_null(), "{m}");
        assert!(m["breaks"].is_string(), "{m}");
    }
    insta::assert_json_snapshot!("zoo_json", v);
}

#[test]
fn every_listed_name_is_a_model_check_accepts() {
    let out = mldebug(&["zoo", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for m in v["models"].as_array().unwrap() {
        let model = format!("zoo::{}", m["name"].as_str().unwrap());
        let run = mldebug(&["check", "class-balance", "--model", &model]);
        assert_ne!(run.status.code(), Some(2), "{model} rejected");
    }
}

#[test]
fn zoo_table_names_each_twin_and_its_bug() {
    let out = mldebug(&["zoo"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with(" mlp-zero-init"))
        .expect(&text);
    assert!(row.contains("twin of mlp"), "{text}");
    insta::assert_snapshot!("zoo_table", text);
}
