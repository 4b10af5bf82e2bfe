//! Every command's `--json` output validates against `schema/output.schema.json`, the documented
//! contract (one envelope: `schema_version`, `command`, then the command's fields), and every
//! subcommand that prints JSON is covered by the schema.

use clap::CommandFactory;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn schema() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/output.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn validator() -> jsonschema::Validator {
    jsonschema::validator_for(&schema()).expect("the schema is a valid JSON Schema")
}

/// Run mldebug with `--json`; the document it printed (exit 0, or 1 for a failed check or gate).
fn output(dir: &Path, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(args)
        .arg("--json")
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: stdout is not JSON ({e})"))
}

fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// Runs in two arms over five seeds (one task), three tasks, and one run per arm (refused).
fn write_runs(dir: &Path) -> [PathBuf; 3] {
    let line = |name: &str, group: &str, seed: u32, task: &str, acc: f64| {
        json!({"name": name, "group": group, "seed": seed, "config": {"task": task},
               "metrics": {"acc": acc}})
        .to_string()
    };
    let mut single = Vec::new();
    let mut multi = Vec::new();
    for seed in 0..5u32 {
        let wobble = f64::from(seed % 3) * 0.004;
        single.push(line(&format!("a{seed}"), "A", seed, "t", 0.72 + wobble));
        single.push(line(
            &format!("b{seed}"),
            "B",
            seed,
            "t",
            0.70 + wobble * 0.5,
        ));
        for task in ["t1", "t2", "t3"] {
            multi.push(line(
                &format!("{task}a{seed}"),
                "A",
                seed,
                task,
                0.7 + wobble,
            ));
            multi.push(line(
                &format!("{task}b{seed}"),
                "B",
                seed,
                task,
                0.69 + wobble,
            ));
        }
    }
    let refused = vec![line("a", "A", 1, "t", 0.5), line("b", "B", 1, "t", 0.6)];
    let paths = [
        dir.join("single.jsonl"),
        dir.join("multi.jsonl"),
        dir.join("refused.jsonl"),
    ];
    for (p, lines) in paths.iter().zip([single, multi, refused]) {
        std::fs::write(p, lines.join("\n") + "\n").unwrap();
    }
    paths
}

/// Every invocation the contract test runs, with its inputs written under `dir`: each
/// subcommand, and the variants whose documents differ in shape.
fn invocations(dir: &Path) -> Vec<Vec<String>> {
    let [single, multi, refused] = write_runs(dir);
    let (single, multi, refused) = (
        single.to_str().unwrap(),
        multi.to_str().unwrap(),
        refused.to_str().unwrap(),
    );
    let skill_dir = dir.join("skills");
    let doctor = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/doctor");
    let doctor_run = |rel: &str| doctor.join(rel).to_string_lossy().into_owned();
    let configs =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/memory/tests/fixtures/configs");
    let config = |name: &str| configs.join(name).to_string_lossy().into_owned();
    let (tinyllama, gpt2) = (config("tinyllama-1.1b.json"), config("gpt2.json"));
    let (lr_jump, nan_hf, healthy) = (
        doctor_run("torch/lr-jump"),
        doctor_run("hf/nan-batch"),
        doctor_run("torch/healthy-s0"),
    );
    let runs: Vec<Vec<&str>> = vec![
        vec!["quote", "karpathy"],
        vec!["quote", "karpathy", "--random", "--seed", "3"],
        vec!["list", "entries"],
        vec!["list", "sources"],
        vec!["list", "checks"],
        vec!["list", "symptoms"],
        vec!["show", "overfit-one-batch"],
        vec!["show", "init-loss"],
        vec!["show", "cs231n-learning"],
        vec!["show", "cs231n-loss-at-chance"],
        vec!["search", "nan", "loss"],
        vec!["triage", "loss is nan after a few steps"],
        vec!["catalog", "verify"],
        vec!["skill", "install", "--dir", skill_dir.to_str().unwrap()],
        vec!["zoo"],
        vec![
            "check",
            "all",
            "--model",
            "zoo::mlp-zero-init",
            "--steps",
            "30",
        ],
        vec![
            "check",
            "nan-trace",
            "--model",
            "zoo::tiny-gpt-mask-times-inf",
        ],
        // Over several seeds: a report per seed and the verdicts over them.
        "check all --model zoo::mlp-zero-init --steps 30 --seeds 0-1,5"
            .split(' ')
            .collect(),
        vec!["demo", "--steps", "20"],
        vec!["sweep-compare", single, "--equivalence-margin", "0.05"],
        vec!["sweep-compare", multi, "--bootstrap-reps", "200"],
        vec!["sweep-compare", refused],
        vec![
            "check",
            "memory",
            "--model",
            "zoo::tiny-gpt-activation-cache",
        ],
        vec![
            "memory",
            "--config",
            &tinyllama,
            "--method",
            "qlora",
            "--lora-r",
            "16",
            "--lora-targets",
            "q_proj,v_proj",
            "--quant",
            "nf4",
            "--batch",
            "1",
            "--seq",
            "1200",
            "--gpu",
            "t4",
        ],
        vec!["memory", "--config", &gpt2],
        vec!["memory", "--model", "zoo::tiny-gpt"],
        vec![
            "memory",
            "--params",
            "7B",
            "--method",
            "lora",
            "--gpu-memory",
            "24GB",
        ],
        vec![
            "memory",
            "--layers",
            "4",
            "--hidden",
            "256",
            "--intermediate",
            "1024",
            "--heads",
            "4",
            "--kv-heads",
            "4",
            "--vocab",
            "1000",
            "--gpus",
            "4",
            "--shard",
            "zero3",
        ],
        vec!["doctor", &lr_jump],
        vec!["doctor", &nan_hf],
        vec!["doctor", &healthy, &lr_jump],
    ];
    runs.into_iter()
        .map(|r| r.into_iter().map(str::to_string).collect())
        .collect()
}

#[test]
fn every_command_output_validates_against_the_schema() {
    let v = validator();
    let t = tempfile::tempdir().unwrap();
    let runs = invocations(t.path());
    let mut covered = BTreeSet::new();
    for args in &runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let doc = output(t.path(), &args);
        let problems = errors(&v, &doc);
        assert!(problems.is_empty(), "{args:?}:\n{}", problems.join("\n"));
        assert_eq!(doc["command"], args[0], "{args:?}");
        covered.insert(args[0].to_string());
    }
    // Every subcommand but `completions` prints JSON, and each is both in the schema and run here.
    let subcommands: BTreeSet<String> = mldebug::cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|n| n != "completions")
        .collect();
    let in_schema: BTreeSet<String> = schema()["properties"]["command"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    assert_eq!(in_schema, subcommands, "the schema's commands");
    // `run` needs a Python with torch: tests/torch/run_cli.rs validates every document it writes.
    covered.insert("run".to_string());
    assert_eq!(covered, subcommands, "the commands this test runs");
}

/// `doctor --watch --json` writes one document per line as findings appear; each validates.
#[test]
fn doctor_watch_events_validate_line_by_line() {
    let v = validator();
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/doctor/torch/nan-batch");
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["doctor", "--watch", "--json", "--idle-timeout", "1"])
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a fail finding: exit 1");
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(!lines.is_empty(), "no events");
    for line in lines {
        let doc: Value = serde_json::from_str(line).expect("one JSON document per line");
        let problems = errors(&v, &doc);
        assert!(problems.is_empty(), "{line}:\n{}", problems.join("\n"));
        assert_eq!(doc["command"], "doctor");
    }
}

#[test]
fn the_schema_rejects_documents_outside_the_contract() {
    let v = validator();
    let t = tempfile::tempdir().unwrap();
    let good = output(t.path(), &["check", "init-loss", "--model", "zoo::mlp"]);
    assert!(errors(&v, &good).is_empty());
    let broken = |edit: &dyn Fn(&mut Value)| {
        let mut doc = good.clone();
        edit(&mut doc);
        errors(&v, &doc)
    };
    assert!(!broken(&|d| {
        d.as_object_mut().unwrap().remove("command");
    })
    .is_empty());
    assert!(!broken(&|d| d["schema_version"] = json!(2)).is_empty());
    assert!(!broken(&|d| d["checks"][0]["status"] = json!("maybe")).is_empty());
    assert!(!broken(&|d| d["checks"][0]["metrics"]["loss"] = json!("lots")).is_empty());
    assert!(!broken(&|d| {
        d.as_object_mut().unwrap().remove("seed");
    })
    .is_empty());
    // Non-finite numbers in a report are the strings the schema names.
    assert!(broken(&|d| d["checks"][0]["metrics"]["loss"] = json!("NaN")).is_empty());
}
