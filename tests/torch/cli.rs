//! The CLI around the driver: exit codes, errors from the user's code, a broken protocol, a
//! Python without torch, stray prints.

use super::support::{
    json_doc, mldebug, mldebug_replayed, mldebug_shared, python, schema_errors, statuses,
};

const MODELS: &str = "tests/fixtures/torch/models.py";

fn target(name: &str) -> String {
    format!("{MODELS}:{name}")
}

#[test]
fn a_clean_model_fails_nothing_and_the_next_commands_name_the_torch_form() {
    let out = mldebug_shared(&["--json", "check", "all", "--torch", &target("Mlp")]);
    let (checks, doc) = statuses(&out);
    assert_eq!(checks.len(), 8, "{checks:?}");
    for (check, status) in &checks {
        assert!(
            status != "fail" && status != "error",
            "{check}: {status}\n{doc:#}"
        );
    }
    assert_eq!(out.status.code(), Some(0));
    let next = doc["checks"][0]["next"].as_str().unwrap();
    assert_eq!(
        next,
        format!("mldebug check class-balance --torch {}", target("Mlp"))
    );
    assert_eq!(doc["model"], target("Mlp"));
}

#[test]
fn a_detached_layer_fails_grad_flow_and_names_it() {
    let out = mldebug_replayed(&[
        "--json",
        "check",
        "grad-flow",
        "--torch",
        &target("Detached"),
    ]);
    let (checks, doc) = statuses(&out);
    assert_eq!(
        checks,
        [("grad-flow".to_string(), "fail".to_string())],
        "{doc:#}"
    );
    let summary = doc["checks"][0]["summary"].as_str().unwrap();
    assert!(summary.contains("up to `fc1`"), "{summary}");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn an_error_in_the_users_forward_is_an_error_with_its_traceback() {
    let out = mldebug_shared(&[
        "--json",
        "check",
        "all",
        "--torch",
        &target("RaisesInForward"),
    ]);
    let (checks, doc) = statuses(&out);
    let errors: Vec<&str> = checks
        .iter()
        .filter(|(_, s)| s == "error")
        .map(|(c, _)| c.as_str())
        .collect();
    assert!(
        errors.contains(&"grad-flow") && errors.contains(&"overfit"),
        "{checks:?}"
    );
    let grad = &doc["checks"][3];
    assert!(
        grad["summary"]
            .as_str()
            .unwrap()
            .contains("shapes do not match"),
        "{grad:#}"
    );
    let details = grad["details"].to_string();
    assert!(
        details.contains("my_forward") || details.contains("forward"),
        "{details}"
    );
    // class-balance reads only the batch, so it still runs.
    assert!(
        checks
            .iter()
            .any(|(c, s)| c == "class-balance" && s == "pass"),
        "{checks:?}"
    );
    assert_eq!(out.status.code(), Some(4));
}

#[test]
fn a_broken_protocol_or_a_missing_name_is_a_usage_error() {
    for name in ["NoBatch", "Nowhere"] {
        let out = mldebug(&["check", "all", "--torch", &target(name)]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(name), "{name}: {err}");
    }
    let out = mldebug(&[
        "check",
        "all",
        "--torch",
        "tests/fixtures/torch/nope.py:Net",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such file"));
}

#[test]
fn a_python_without_torch_is_exit_2_with_the_install_hint() {
    // `-S` hides site-packages, so the same interpreter cannot import torch.
    let dir = std::env::temp_dir().join(format!("mldebug-notorch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shim = dir.join("python");
    std::fs::write(
        &shim,
        format!("#!/bin/sh\nexec '{}' -S \"$@\"\n", python().display()),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["check", "init-loss", "--torch", &target("Mlp"), "--python"])
        .arg(&shim)
        .current_dir(super::support::repo())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot import torch") && err.contains("pip install torch"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn prints_from_the_users_code_do_not_break_the_report() {
    let out = mldebug_replayed(&["--json", "check", "init-loss", "--torch", &target("Chatty")]);
    let (checks, _) = statuses(&out);
    assert_eq!(checks, [("init-loss".to_string(), "pass".to_string())]);
}

#[test]
fn the_same_seed_gives_the_same_numbers() {
    let run = || {
        let out = mldebug(&[
            "--json",
            "check",
            "overfit",
            "--torch",
            &target("Mlp"),
            "--seed",
            "3",
        ]);
        statuses(&out).1["checks"][0]["metrics"].clone()
    };
    assert_eq!(run(), run());
}

/// `check --seeds` runs every seed in one driver process; each seed's report must be the one a
/// run of that seed alone gives (every check seeds and builds afresh and puts the RNGs and any
/// shared model back), for a plain module and a Hugging Face causal LM. The torch zoo relies on
/// it. The driver runs are kept ([`mldebug_replayed`]): they are measured again whenever the
/// driver, the models' folder or the interpreter changes, which is all that could make them
/// differ.
#[test]
fn a_run_over_several_seeds_measures_what_each_seed_alone_does() {
    let hf = format!(
        "hf:{}",
        super::support::repo()
            .join("torch/zoo/hf/llama-tiny")
            .display()
    );
    for spec in [target("Mlp"), hf] {
        let many =
            mldebug_replayed(&["--json", "check", "all", "--torch", &spec, "--seeds", "2,5"]);
        let doc = json_doc(&many);
        assert_eq!(doc["seeds"], serde_json::json!([2, 5]), "{doc}");
        for (i, seed) in ["2", "5"].into_iter().enumerate() {
            let one =
                mldebug_replayed(&["--json", "check", "all", "--torch", &spec, "--seed", seed]);
            let (_, alone) = statuses(&one);
            let report = &doc["reports"][i];
            assert_eq!(report["seed"].to_string(), seed);
            assert_eq!(
                report["checks"], alone["checks"],
                "{spec} seed {seed}: over several seeds != alone"
            );
        }
        let verdicts = doc["verdicts"].as_array().expect("verdicts");
        assert_eq!(verdicts.len(), 8, "{doc}");
    }
}

#[test]
fn the_torch_report_validates_against_the_output_schema() {
    for name in ["Mlp", "Detached", "RaisesInForward"] {
        let out = mldebug_shared(&["--json", "check", "all", "--torch", &target(name)]);
        let (_, doc) = statuses(&out);
        let errors = schema_errors(&doc);
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
    // Over several seeds, with a model whose forward raises (every check an error, per seed).
    for name in ["Detached", "RaisesInForward"] {
        let out = mldebug_shared(&[
            "--json",
            "check",
            "all",
            "--torch",
            &target(name),
            "--seeds",
            "0-1",
        ]);
        let doc = json_doc(&out);
        assert_eq!(doc["reports"].as_array().map(Vec::len), Some(2), "{doc}");
        let errors = schema_errors(&doc);
        assert!(errors.is_empty(), "{name} --seeds: {errors:?}");
    }
}
