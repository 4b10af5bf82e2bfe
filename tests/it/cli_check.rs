//! `mldebug check` end to end: the real binary on zoo models, its human report (insta
//! snapshots), `--json`, `--plot`, colour and the exit codes.

use std::process::{Command, Output};

fn mldebug(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the mldebug binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("stderr is UTF-8")
}

/// Bytes measured by `check memory` depend on the allocator and the matmul kernels of the
/// machine: the snapshots keep the verdict and the words, not the byte counts.
fn without_bytes(text: &str) -> String {
    let mut out = Vec::new();
    let mut in_memory_row = false;
    for line in text.lines() {
        if line.starts_with(" memory ") {
            in_memory_row = true;
        } else if !line.starts_with("    ") && !line.starts_with(" ".repeat(10).as_str()) {
            in_memory_row = false;
        }
        if in_memory_row || line.starts_with(" memory ") {
            let kept: String = line
                .split_whitespace()
                .map(|w| {
                    if w.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                        "[n]"
                    } else {
                        w
                    }
                })
                .collect::<Vec<_>>()
                .join(" ");
            out.push(kept);
        } else {
            out.push(line.to_string());
        }
    }
    out.join("\n") + "\n"
}

#[test]
fn a_clean_model_passes_every_check_and_exits_0() {
    let out = mldebug(&["check", "all", "--model", "zoo::mlp"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains('\x1b'), "NO_COLOR must turn colour off");
    insta::assert_snapshot!("check_all_mlp", without_bytes(&text));
}

#[test]
fn a_buggy_twin_fails_with_details_and_exits_1() {
    let out = mldebug(&["check", "all", "--model", "zoo::mlp-zero-init"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("see:  mldebug show check-grad-flow"),
        "{text}"
    );
    assert!(text.contains("next: mldebug check"), "{text}");
    insta::assert_snapshot!("check_all_mlp_zero_init", without_bytes(&text));
}

#[test]
fn one_check_runs_alone() {
    let out = mldebug(&["check", "class-balance", "--model", "zoo::mlp-imbalanced"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("class-balance"), "{text}");
    assert!(!text.contains("overfit"), "{text}");
    assert!(text.ends_with("1 check: 1 fail\n"), "{text}");
}

/// Floats rounded to three significant digits and curves reduced to their length, so the
/// snapshot is about the schema and the verdicts rather than the last bits of a float.
fn stable(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().expect("an f64");
            let rounded: f64 = format!("{x:.2e}").parse().expect("parses back");
            *v = serde_json::json!(rounded);
        }
        Value::Array(items) => items.iter_mut().for_each(stable),
        Value::Object(map) => {
            if let Some(Value::Array(points)) = map.get("points") {
                let n = points.len();
                map.insert("points".into(), serde_json::json!(format!("[{n} points]")));
            }
            map.values_mut().for_each(stable);
        }
        _ => {}
    }
}

#[test]
fn json_is_the_report_schema() {
    let out = mldebug(&["--json", "check", "all", "--model", "zoo::mlp-zero-init"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let mut v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("stdout is JSON");
    assert_eq!(v["schema_version"], mldebug_report::SCHEMA_VERSION);
    assert_eq!(v["command"], "check");
    assert_eq!(v["model"], "zoo::mlp-zero-init");
    assert_eq!(v["device"], "cpu");
    assert_eq!(v["seed"], 0);
    let checks = v["checks"].as_array().expect("a list of findings");
    assert_eq!(checks.len(), mldebug_diagnostics::CheckId::ALL.len());
    for f in checks {
        for key in [
            "check", "status", "summary", "metrics", "details", "entry", "next",
        ] {
            assert!(f.get(key).is_some(), "finding without `{key}`: {f}");
        }
        let id = f["check"].as_str().unwrap();
        assert_eq!(f["entry"], format!("check-{id}"));
    }
    let grad_flow = checks.iter().find(|f| f["check"] == "grad-flow").unwrap();
    assert_eq!(grad_flow["status"], "fail");
    let memory = checks.iter().position(|f| f["check"] == "memory").unwrap();
    assert_eq!(v["checks"][memory]["status"], "pass");
    // Measured bytes depend on the machine (see `without_bytes`).
    v["checks"][memory]["metrics"] = serde_json::json!("[measured bytes]");
    v["checks"][memory]["details"] = serde_json::json!("[measured bytes]");
    v["checks"][memory]["summary"] = serde_json::json!("[measured bytes]");
    // The curves behind the plots stay out of the default report.
    assert!(checks_of(&v).iter().all(|f| f.get("series").is_none()));
    stable(&mut v);
    insta::assert_json_snapshot!("check_all_mlp_zero_init_json", v);
}

fn checks_of(v: &serde_json::Value) -> Vec<serde_json::Value> {
    v["checks"].as_array().cloned().unwrap_or_default()
}

#[test]
fn series_come_with_the_flag_in_the_order_of_the_rows() {
    let out = mldebug(&[
        "--json",
        "check",
        "grad-flow",
        "--model",
        "zoo::mlp-zero-init",
        "--series",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("stdout is JSON");
    let f = &checks_of(&v)[0];
    let labels: Vec<String> = f["series"][0]["labels"]
        .as_array()
        .expect("the gradient profile")
        .iter()
        .map(|l| l.as_str().unwrap().split(' ').next().unwrap().to_string())
        .collect();
    let rows: Vec<String> = f["details"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d.as_str().unwrap().split(" [").next())
        .filter(|name| labels.iter().any(|l| l == name))
        .map(str::to_string)
        .collect();
    assert_eq!(
        labels, rows,
        "the plot and the rows list parameters in one order"
    );
}

#[test]
fn the_same_seed_gives_the_same_report() {
    let args = [
        "--json", "check", "all", "--model", "zoo::cnn", "--seed", "7",
    ];
    assert_eq!(stdout(&mldebug(&args)), stdout(&mldebug(&args)));
}

#[test]
fn an_unknown_zoo_model_is_a_usage_error_naming_close_names() {
    let out = mldebug(&["check", "all", "--model", "zoo::mpl"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("zoo::mpl"), "{err}");
    assert!(err.contains("did you mean mlp"), "{err}");
    assert!(
        stdout(&out).is_empty(),
        "nothing on stdout after a usage error"
    );
}

#[test]
fn an_unknown_check_id_is_a_usage_error_listing_the_ids() {
    let out = mldebug(&["check", "overfitt", "--model", "zoo::mlp"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("unknown check `overfitt`"), "{err}");
    assert!(err.contains("init-loss") && err.contains("all"), "{err}");
}

#[test]
fn zero_steps_is_a_usage_error() {
    let out = mldebug(&["check", "overfit", "--model", "zoo::mlp", "--steps", "0"]);
    assert_eq!(out.status.code(), Some(2));
}

#[cfg(not(feature = "cuda"))]
#[test]
fn cuda_without_the_feature_is_a_usage_error() {
    let out = mldebug(&["check", "all", "--model", "zoo::mlp", "--device", "cuda"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--features cuda"), "{}", stderr(&out));
    let out = mldebug(&["check", "all", "--model", "zoo::mlp", "--device", "tpu"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn plots_are_svg_files_named_after_check_and_curve() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("plots");
    let out = mldebug(&[
        "check",
        "all",
        "--model",
        "zoo::mlp-deep-sigmoid",
        "--plot",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    for name in ["overfit-loss.svg", "grad-flow-grad-norm.svg"] {
        let svg = std::fs::read_to_string(dir.join(name)).expect(name);
        assert!(svg.starts_with("<svg"), "{name}");
        assert!(stdout(&out).contains(name), "the report names {name}");
    }
    let profile = std::fs::read_to_string(dir.join("grad-flow-grad-norm.svg")).unwrap();
    assert!(
        profile.contains("hidden.0.weight"),
        "parameter names label the bars"
    );
}

#[test]
fn the_overfit_row_carries_a_sparkline() {
    let out = mldebug(&["check", "overfit", "--model", "zoo::mlp"]);
    let text = stdout(&out);
    assert!(
        text.chars().any(|c| ('▁'..='█').contains(&c)),
        "no sparkline:\n{text}"
    );
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let plain = mldebug(&["check", "init-loss", "--model", "zoo::mlp"]);
    assert!(!stdout(&plain).contains('\x1b'));
    let forced = mldebug(&[
        "--color",
        "always",
        "check",
        "init-loss",
        "--model",
        "zoo::mlp",
    ]);
    assert!(stdout(&forced).contains("\x1b["), "{}", stdout(&forced));
    let never = mldebug(&[
        "--color",
        "never",
        "check",
        "init-loss",
        "--model",
        "zoo::mlp",
    ]);
    assert!(!stdout(&never).contains('\x1b'));
}

#[test]
fn a_model_outside_the_zoo_goes_to_the_harness() {
    // Outside any crate, so the harness stops before building anything (the harness tests cover
    // the paths that build a user's crate).
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["check", "all", "--model", "crate::Net"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .expect("the mldebug binary runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no Cargo.toml"), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
}

#[test]
fn python_and_lora_without_a_torch_model_are_refused() {
    for flag in [
        ["--python", "/usr/bin/python3"],
        ["--lora", "r=8,targets=q_proj"],
    ] {
        let o = mldebug(&[
            "check",
            "init-loss",
            "--model",
            "zoo::mlp",
            flag[0],
            flag[1],
        ]);
        assert_eq!(o.status.code(), Some(2), "{flag:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("{} does not apply to a zoo model", flag[0])),
            "{}",
            stderr(&o)
        );
    }
}
