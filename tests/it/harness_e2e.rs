//! End to end: the real `mldebug` binary checks a model in a user's crate (a copy of
//! `examples/user-crate`), once clean and once with a planted bug, and the same crate's own
//! `#[test]` runs a check through the library.
//!
//! The copies build into the workspace's target dir and reuse the candle its tests were built
//! with (see `harness_support`); a run builds only the small crate and the harness.

use crate::harness_support;

use harness_support::{mldebug, plant, show, user_crate_copy};
use serde_json::Value;

fn report(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{}", show(out)))
}

fn findings(report: &Value) -> Vec<(String, String, String)> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["check"].as_str().unwrap().to_string(),
                f["status"].as_str().unwrap().to_string(),
                format!("{} {}", f["summary"], f["details"]),
            )
        })
        .collect()
}

#[test]
fn clean_model_passes_every_check_and_a_detached_layer_fails_grad_flow() {
    let clean = user_crate_copy(|lib| lib);
    let out = mldebug(
        clean.path(),
        &["check", "all", "--model", "crate::Net", "--debug", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let r = report(&out);
    assert_eq!(r["model"], "crate::Net");
    let clean_findings = findings(&r);
    assert_eq!(
        clean_findings.len(),
        mldebug_diagnostics::CheckId::ALL.len(),
        "{clean_findings:?}"
    );
    for (check, status, text) in &clean_findings {
        assert!(
            status == "pass" || status == "warn",
            "{check} on the clean model: {status}: {text}"
        );
    }

    // The planted bug: the first layer's output is detached, so fc1 never learns.
    let buggy = user_crate_copy(|lib| {
        plant(
            lib,
            "let hidden = self.fc1.forward(xs)?.relu()?;",
            "let hidden = self.fc1.forward(xs)?.relu()?.detach();",
        )
    });
    let grad_flow = [
        "check",
        "grad-flow",
        "--model",
        "crate::Net",
        "--debug",
        "--json",
    ];
    let out = mldebug(buggy.path(), &grad_flow);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let found = findings(&report(&out));
    let (check, status, text) = &found[0];
    assert_eq!(
        (check.as_str(), status.as_str()),
        ("grad-flow", "fail"),
        "{text}"
    );
    assert!(
        text.contains("fc1"),
        "the finding must name the detached layer: {text}"
    );

    // Over several seeds (the crate built once, the harness run per seed): a report per seed,
    // each failing grad-flow, and the verdicts over them.
    let out = mldebug(
        buggy.path(),
        &[&grad_flow[..], &["--seeds", "3,1"]].concat(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let doc = report(&out);
    let seeds: Vec<u64> = doc["reports"]
        .as_array()
        .expect("reports")
        .iter()
        .map(|r| r["seed"].as_u64().expect("seed"))
        .collect();
    assert_eq!(seeds, [3, 1], "{doc}");
    assert_eq!(
        doc["verdicts"][0]["fail"],
        serde_json::json!([3, 1]),
        "{doc}"
    );
}

#[test]
fn the_user_crates_own_test_runs_a_check_through_the_library() {
    let copy = user_crate_copy(|lib| lib);
    let out = harness_support::cargo(copy.path(), &["test"]);
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("test tests::net_can_overfit_one_batch ... ok"),
        "{}",
        show(&out)
    );
}

#[test]
fn a_loss_that_becomes_nan_is_a_failed_check_with_a_readable_report() {
    // A log-sum-exp written without subtracting the max, on logits scaled 100x: exp overflows.
    let nan = user_crate_copy(|lib| {
        let lib = plant(
            lib,
            "        Module::forward(self, input)\n",
            "        Module::forward(self, &(input * 100.0)?)\n",
        );
        plant(
            lib,
            "    // `loss` and `task` keep their defaults: mean cross-entropy, classification.\n",
            "    fn loss(&self, output: &Tensor, targets: &Tensor) -> Result<Tensor> {\n        \
             let lse = output.exp()?.sum_keepdim(1)?.log()?;\n        \
             let picked = output.gather(&targets.unsqueeze(1)?, 1)?;\n        \
             (lse - picked)?.mean_all()\n    }\n",
        )
    });
    let out = mldebug(
        nan.path(),
        // --series: the curve behind the plot, where the NaN must survive.
        &[
            "check",
            "all",
            "--model",
            "crate::Net",
            "--debug",
            "--json",
            "--series",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let r = mldebug_diagnostics::harness::report_from_json(&text)
        .unwrap_or_else(|e| panic!("{e}\n{}", show(&out)));
    assert!(
        text.contains(&format!(
            "\"schema_version\": {}",
            mldebug_report::SCHEMA_VERSION
        )),
        "{text}"
    );
    let overfit = r.finding(mldebug_diagnostics::CheckId::Overfit).unwrap();
    assert_eq!(overfit.status.as_str(), "fail", "{}", overfit.summary);
    assert!(
        overfit.summary.starts_with("numerics"),
        "{}",
        overfit.summary
    );
    assert!(
        overfit.series[0].points.iter().any(|p| !p[1].is_finite()),
        "the NaN survives: {:?}",
        overfit.series[0].points
    );
    assert!(
        text.contains("\"NaN\"") || text.contains("\"inf\""),
        "{text}"
    );
}

#[test]
fn memory_estimates_the_users_model_and_names_its_error() {
    let clean = user_crate_copy(|lib| lib);
    let out = mldebug(
        clean.path(),
        &["memory", "--model", "crate::Net", "--debug", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let v = report(&out);
    assert_eq!(v["command"], "memory");
    assert_eq!(v["model"], "crate::Net");
    let e = &v["estimate"];
    // fc1 20→32 and fc2 32→4, weights and biases, counted from the shapes.
    let params = 20 * 32 + 32 + 32 * 4 + 4;
    assert_eq!(e["values"], params, "{e}");
    assert_eq!(e["trainable"], params, "{e}");
    assert_eq!(e["value_bytes"], 4, "{e}");
    let stage = |k: &str| e["estimate"][k].as_f64().unwrap();
    // Loading holds at least the f32 weights; the forward adds activations, the backward
    // gradients.
    assert!(stage("load") >= (params * 4) as f64, "{e}");
    assert!(stage("load") < stage("forward"), "{e}");
    assert!(stage("forward") < stage("backward"), "{e}");
    // At the optimizer step the weights, their gradients and AdamW's two moments are all held.
    assert!(
        stage("optimizer_step") >= stage("load") + (3 * params * 4) as f64,
        "{e}"
    );

    let broken = user_crate_copy(|lib| {
        plant(
            lib,
            "        Net::new(vb)\n",
            "        let _ = Net::new(vb)?;\n        candle_core::bail!(\"weights file missing\")\n",
        )
    });
    let out = mldebug(
        broken.path(),
        &["memory", "--model", "crate::Net", "--debug"],
    );
    assert_eq!(out.status.code(), Some(4), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "crate::Net: estimating its memory: the model returned an error: weights file missing"
        ),
        "{err}"
    );
}

#[test]
fn timeout_stops_the_harness_checks_and_keeps_the_verdicts_before_it() {
    // Logits multiplied by 0: the loss never moves, so overfit would run all its steps.
    let stuck = user_crate_copy(|lib| {
        plant(
            lib,
            "        Module::forward(self, input)\n",
            "        Module::forward(self, input)?.affine(0.0, 0.0)\n",
        )
    });
    let args = [
        "check",
        "all",
        "--model",
        "crate::Net",
        "--debug",
        "--json",
        "--steps",
        "100000",
        "--timeout",
        "2",
    ];
    let out = mldebug(stuck.path(), &args);
    assert_eq!(out.status.code(), Some(4), "{}", show(&out));
    let r = report(&out);
    let found = findings(&r);
    let overfit = found.iter().find(|(c, _, _)| c == "overfit").unwrap();
    assert_eq!(overfit.1, "error", "{overfit:?}");
    // Stopped by the harness itself (the report is its own), not killed by the CLI.
    assert!(
        overfit
            .2
            .starts_with("\"timed out after 2s (--timeout) and was stopped\""),
        "{overfit:?}"
    );
    let init = found.iter().find(|(c, _, _)| c == "init-loss").unwrap();
    assert_ne!(init.1, "error", "{init:?}");
}

/// `cargo tree --offline --prefix none` in `dir` with `args`: one line per package.
fn cargo_tree(dir: &std::path::Path, args: &[&str]) -> std::collections::BTreeSet<String> {
    let mut all = vec!["tree", "--offline", "--prefix", "none"];
    all.extend_from_slice(args);
    let out = harness_support::cargo(dir, &all);
    assert!(out.status.success(), "{}", show(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim_end_matches(" (*)").to_string())
        .collect()
}

/// The features cargo enables on candle-core's dependency graph, one `name version [features]`
/// line per package, as `cargo tree` resolves them in `dir` over `edges`.
fn candle_features(dir: &std::path::Path, edges: &str) -> std::collections::BTreeSet<String> {
    cargo_tree(dir, &["-e", edges, "-p", "candle-core", "-f", "{p} [{f}]"])
}
/// The copies reuse the workspace's compiled candle only while cargo resolves candle's graph
/// for them as it did for the workspace's tests (dev-dependencies included) and compiles each
/// shared crate with the same settings. When a dependency change breaks that, nothing fails
/// but the first harness test compiles candle again (minutes): this test says what to align.
#[test]
fn e2e_crates_build_candle_as_the_workspace_does() {
    let copy = user_crate_copy(|lib| lib);
    let workspace = candle_features(&harness_support::repo(), "normal,build,dev");
    let e2e = candle_features(copy.path(), "normal,build");
    let only = |a: &std::collections::BTreeSet<String>, b: &std::collections::BTreeSet<String>| {
        a.difference(b).cloned().collect::<Vec<_>>().join("\n  ")
    };
    assert!(
        workspace == e2e,
        "candle's graph differs; align ALIGNING_DEPENDENCIES in tests/it/harness_support.rs\n\
         workspace only:\n  {}\ncopies only:\n  {}",
        only(&workspace, &e2e),
        only(&e2e, &workspace)
    );
    // The same opt-level for every crate of the graph: the workspace's overrides that name
    // one of its crates are exactly the copies' E2E_UNOPTIMISED.
    let manifest: toml::Table = std::fs::read_to_string(harness_support::repo().join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let overrides = manifest["profile"]["dev"]["package"].as_table().unwrap();
    let in_graph: std::collections::BTreeSet<String> =
        cargo_tree(copy.path(), &["-e", "normal,build", "-f", "{p}"])
            .iter()
            .filter_map(|l| l.split(' ').next().map(str::to_string))
            .collect();
    let mut expected: Vec<&str> = overrides
        .iter()
        .filter(|(name, _)| *name != "*" && in_graph.contains(name.as_str()))
        .map(|(name, settings)| {
            assert_eq!(
                settings.get("opt-level").and_then(|v| v.as_integer()),
                Some(0),
                "{name}: the copies set opt-level 0 only"
            );
            name.as_str()
        })
        .collect();
    let mut listed = harness_support::E2E_UNOPTIMISED.to_vec();
    expected.sort_unstable();
    listed.sort_unstable();
    assert_eq!(
        expected, listed,
        "the workspace's opt-level overrides on the copies' graph vs E2E_UNOPTIMISED"
    );
}
