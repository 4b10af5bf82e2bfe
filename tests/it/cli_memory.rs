//! `mldebug memory`: the TinyLlama QLoRA anchor as a person reads it (snapshot) and as a program
//! reads it (`--json`), the same shape from flags and from config.json, and every kind of bad
//! input answered with exit 2 and a message that names what is wrong.

use std::process::{Command, Output};

const TINYLLAMA: &str = "crates/memory/tests/fixtures/configs/tinyllama-1.1b.json";
const ANCHOR: [&str; 10] = [
    "--method",
    "qlora",
    "--lora-r",
    "16",
    "--lora-targets",
    "q_proj,v_proj",
    "--batch",
    "1",
    "--seq",
    "1200",
];

fn mldebug(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["--color", "never"])
        .args(args)
        .output()
        .expect("run mldebug")
}

fn memory(args: &[&str]) -> Output {
    let mut all = vec!["memory"];
    all.extend_from_slice(args);
    mldebug(&all)
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = memory(&all);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn tinyllama_qlora_table() {
    let mut args = vec!["--config", TINYLLAMA];
    args.extend_from_slice(&ANCHOR);
    let out = memory(&args);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    // refs/memory.md shows this output whole, the README its stage table and peak line.
    let refs = std::fs::read_to_string("refs/memory.md").unwrap();
    assert!(
        refs.contains(text.trim_end()),
        "refs/memory.md lacks the current output"
    );
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| l.starts_with(" stage ")).unwrap();
    let end = lines.iter().position(|l| l.starts_with("peak ")).unwrap();
    let readme = std::fs::read_to_string("README.md").unwrap();
    let block = lines[start..=end].join("\n");
    assert!(readme.contains(&block), "README.md lacks\n{block}");
    insta::assert_snapshot!(text);
}

#[test]
fn json_has_the_envelope_components_stages_and_targets() {
    let mut args = vec!["--config", TINYLLAMA, "--gpu", "t4,h100"];
    args.extend_from_slice(&ANCHOR);
    let v = json(&args);
    assert_eq!(v["schema_version"], mldebug_report::SCHEMA_VERSION);
    assert_eq!(v["command"], "memory");
    assert_eq!(v["shape"]["family"], "llama");
    assert_eq!(v["estimate"]["params"]["total"], 1_100_048_384u64);
    let keys: Vec<&str> = v["estimate"]["components"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    for k in [
        "weights.unquantized",
        "weights.codes",
        "weights.constants",
        "adapters",
        "gradients",
        "optimizer",
        "activations",
        "logits",
        "overhead.allocator",
    ] {
        assert!(keys.contains(&k), "{k} missing from {keys:?}");
    }
    let stages: Vec<&str> = v["estimate"]["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    assert_eq!(stages, ["load", "forward", "backward", "optimizer-step"]);
    let targets = v["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 2);
    assert_eq!(targets[0]["gpu"], "t4");
    assert!(targets.iter().all(|t| t["fits"] == true));
    // Each card is held to the total CUDA reports for it, with the report it comes from.
    for (t, name) in targets.iter().zip(["t4", "h100"]) {
        let g = mldebug_memory::fit::gpu(name).unwrap();
        let sold = t["reported"]["sold_gb"].as_f64().unwrap() * 1073741824.0;
        assert_eq!(t["memory"].as_f64().unwrap(), g.bytes);
        assert!(g.bytes < sold, "{name}: {} is not below {sold}", g.bytes);
        assert!(t["reported"]["url"]
            .as_str()
            .unwrap()
            .starts_with("https://"));
    }
}

#[test]
fn the_same_shape_from_flags_and_from_config_json_gives_the_same_estimate() {
    let from_config = json(&["--config", TINYLLAMA]);
    let from_flags = json(&[
        "--layers",
        "22",
        "--hidden",
        "2048",
        "--intermediate",
        "5632",
        "--heads",
        "32",
        "--kv-heads",
        "4",
        "--vocab",
        "32000",
    ]);
    assert_eq!(from_config["estimate"], from_flags["estimate"]);
}

/// `--params N`: the guessed shape holds N parameters (within 1%) over the whole range the flag
/// accepts, and the weights and optimizer state are that count times their bytes.
#[test]
fn a_parameter_count_is_the_count_the_estimate_uses() {
    for count in [
        "1M", "3M", "10M", "31M", "124M", "350M", "1.1B", "7B", "13B", "70B", "405B", "100T",
    ] {
        let v = json(&["--params", count, "--gpu", "h100"]);
        let n = mldebug_memory::units::parse_count(count).unwrap() as f64;
        let total = v["estimate"]["params"]["total"].as_f64().unwrap();
        assert!(
            (total / n - 1.0).abs() <= 0.01,
            "--params {count}: the estimate counts {total}"
        );
        let component = |key: &str| {
            v["estimate"]["components"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["key"] == key)
                .unwrap_or_else(|| panic!("{key}"))["bytes"]
                .as_f64()
                .unwrap()
        };
        // The default setup: mixed bf16 (2-byte weights, fp32 master), AdamW (8 bytes).
        assert_eq!(component("weights"), 2.0 * total, "--params {count}");
        assert_eq!(component("optimizer"), 8.0 * total, "--params {count}");
        let words = v["assumptions"][0].as_str().unwrap();
        assert!(
            words.contains("shape guessed from the parameter count"),
            "{words}"
        );
    }
}

/// A flag given is used or refused, never replaced by its default or dropped: `--quant none`
/// with `--method qlora` was read as nf4, and `--model` ignored every training flag.
#[test]
fn a_flag_given_is_used_or_refused_with_both_flags_named() {
    let refused: &[(&[&str], &[&str])] = &[
        (
            &["--params", "7B", "--method", "qlora", "--quant", "none"],
            &["--quant none", "--method qlora"],
        ),
        (
            &["--params", "7B", "--lora-r", "16"],
            &["--lora-r", "--method full"],
        ),
        (
            &["--params", "7B", "--method", "lora", "--no-kbit-upcast"],
            &["--no-kbit-upcast", "--quant none"],
        ),
        (
            &[
                "--params",
                "7B",
                "--method",
                "qlora",
                "--quant",
                "int8",
                "--double-quant",
            ],
            &["--double-quant", "--quant int8"],
        ),
        (
            &["--model", "zoo::mlp", "--batch", "8"],
            &["--batch", "--model zoo::mlp"],
        ),
        (
            &["--model", "zoo::mlp", "--headroom", "20"],
            &["--headroom"],
        ),
        (&["--model", "zoo::mlp", "--method", "full"], &["--method"]),
        (
            &["--params", "7B", "--features", "cuda"],
            &["--features", "crate::PATH"],
        ),
        (
            &["--model", "zoo::mlp", "--release"],
            &["--release", "crate::PATH"],
        ),
    ];
    for (args, words) in refused {
        let err = usage_error(args);
        for w in *words {
            assert!(err.contains(w), "{args:?}: `{w}` not in {err}");
        }
    }
    // Given values that fit together are honoured as given.
    let v = json(&["--params", "7B", "--method", "lora", "--quant", "int8"]);
    assert_eq!(v["setup"]["method"], "lora");
    assert_eq!(v["setup"]["quant"], "int8");
    let v = json(&["--params", "7B", "--method", "qlora"]);
    assert_eq!(v["setup"]["quant"], "nf4");
    let v = json(&["--params", "7B", "--method", "full", "--quant", "none"]);
    assert_eq!(v["setup"]["quant"], "none");
}

/// A config.json value outside its field's range is exit 2 naming the file, the field and the
/// range (`attention_dropout: 1e308` was accepted).
#[test]
fn a_config_value_out_of_range_names_the_file_the_field_and_the_range() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    let text = std::fs::read_to_string(TINYLLAMA).unwrap();
    let mut config: serde_json::Value = serde_json::from_str(&text).unwrap();
    for (field, bad, range) in [
        ("attention_dropout", "1e308", "a probability from 0 to 1"),
        ("attention_dropout", "-0.5", "a probability from 0 to 1"),
        ("num_hidden_layers", "0", "a whole number from 1 to 100000"),
        ("hidden_size", "1e308", "a whole number from 1 to 1000000"),
    ] {
        let mut c = config.clone();
        c[field] = serde_json::from_str(bad).unwrap();
        std::fs::write(&path, c.to_string()).unwrap();
        let err = usage_error(&["--config", path.to_str().unwrap()]);
        let want = format!("{}: field `{field}`: expected {range}", path.display());
        assert!(err.contains(&want), "{field} = {bad}: {err}");
    }
    config["attention_dropout"] = serde_json::json!(0.1);
    std::fs::write(&path, config.to_string()).unwrap();
    let v = json(&["--config", path.to_str().unwrap()]);
    assert_eq!(v["shape"]["attention_dropout"], 0.1);
}

#[test]
fn a_full_fine_tune_that_does_not_fit_says_so_and_ranks_the_levers() {
    let v = json(&[
        "--config", TINYLLAMA, "--gpu", "t4", "--seq", "2048", "--batch", "4",
    ]);
    assert_eq!(v["targets"][0]["fits"], false);
    let levers = v["levers"].as_array().unwrap();
    let saves: Vec<f64> = levers
        .iter()
        .map(|l| l["saves"].as_f64().unwrap())
        .collect();
    assert!(saves.windows(2).all(|w| w[0] >= w[1]), "{saves:?}");
    // Full training of 1.1B parameters: adapters save the most, then checkpointing.
    assert_eq!(levers[0]["lever"], "LoRA instead of full training");
    assert_eq!(levers[1]["lever"], "gradient checkpointing");
}

fn usage_error(args: &[&str]) -> String {
    let out = memory(args);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?} should be a usage error; stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(out.stdout.is_empty());
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn bad_input_is_exit_2_with_a_message_that_names_it() {
    let cases: &[(&[&str], &str)] = &[
        (&[], "give the model"),
        (&["--params", "7b"], "expected a count such as 7B"),
        (
            &["--params", "7B", "--gpu-memory", "24 GB"],
            "expected a size such as 24GB",
        ),
        (&["--params", "7B", "--gpu-memory=-24GB"], "expected a size"),
        (&["--params", "7B", "--gpu", "v100"], "unknown GPU `v100`"),
        (
            &["--params", "7B", "--batch", "0"],
            "expected a batch size from 1 to 65536",
        ),
        (&["--params", "7B", "--batch", "x"], "is not a whole number"),
        (&["--params", "7B", "--seq", "1e3"], "is not a whole number"),
        (
            &["--params", "7B", "--headroom", "95"],
            "expected a percentage from 0 to 90",
        ),
        (
            &["--params", "7B", "--optimizer", "adam"],
            "expected one of adamw, adamw-8bit",
        ),
        (&["--params", "7B", "--quant", "nf4"], "--method qlora"),
        (&["--params", "7B", "--shard", "zero3"], "--gpus 2"),
        (&["--params", "999K"], "expected 1M to 100T parameters"),
        (&["--params", "101T"], "out of range"),
        (
            &[
                "--params",
                "7B",
                "--method",
                "lora",
                "--lora-targets",
                "c_attn",
            ],
            "no linear layer of a",
        ),
        (
            &[
                "--layers", "2", "--hidden", "64", "--heads", "5", "--vocab", "10",
            ],
            "must divide --hidden",
        ),
        (&["--config", "no/such/config.json"], "no/such/config.json"),
        (
            &["--config", TINYLLAMA, "--params", "7B"],
            "cannot be used with",
        ),
    ];
    for (args, expected) in cases {
        let err = usage_error(args);
        assert!(
            err.contains(expected),
            "{args:?}: `{expected}` not in {err}"
        );
    }
}

#[test]
fn a_config_missing_a_field_names_the_file_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    std::fs::write(
        &path,
        r#"{"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_positions": 128}"#,
    )
    .unwrap();
    let err = usage_error(&["--config", path.to_str().unwrap()]);
    assert!(
        err.contains("config.json: field `n_layer`: missing"),
        "{err}"
    );
    // Control characters in a value never reach the terminal raw.
    std::fs::write(&path, "{\"model_type\": \"x\\u001b[31mred\"}").unwrap();
    let err = usage_error(&["--config", path.to_str().unwrap()]);
    assert!(!err.contains('\u{1b}'), "{err:?}");
}

/// `--model zoo::<name>`: the candle model's own counts and stage estimate, every zoo model.
#[test]
fn a_zoo_model_is_counted_and_estimated_from_its_own_graph() {
    for m in mldebug_diagnostics::zoo::all() {
        let model = format!("zoo::{}", m.name);
        let v = json(&["--model", &model]);
        assert_eq!(v["model"], model.as_str());
        let e = &v["estimate"];
        let (values, trainable) = (
            e["values"].as_u64().unwrap(),
            e["trainable"].as_u64().unwrap(),
        );
        assert!(trainable > 0 && trainable <= values, "{model}: {e}");
        let stage = |s: &str| e["estimate"][s].as_f64().unwrap();
        // Weights are alive from load on; forward adds the graph, backward the gradients.
        assert!(stage("load") >= 4.0 * values as f64, "{model}: {e}");
        assert!(stage("load") < stage("forward"), "{model}: {e}");
        assert!(stage("forward") < stage("backward"), "{model}: {e}");
        assert!(stage("forward") < stage("optimizer_step"), "{model}: {e}");
    }
}

#[test]
fn batch_norm_statistics_are_counted_but_not_trained() {
    let e = &json(&["--model", "zoo::mlp-batchnorm"])["estimate"];
    let (values, trainable) = (
        e["values"].as_u64().unwrap(),
        e["trainable"].as_u64().unwrap(),
    );
    // Two batch norms of HIDDEN features, each with a running mean and a running variance.
    let buffers = 2 * 2 * mldebug_diagnostics::zoo::mlp::HIDDEN as u64;
    assert_eq!(values - trainable, buffers, "{e}");
    let plain = &json(&["--model", "zoo::mlp"])["estimate"];
    assert_eq!(plain["values"], plain["trainable"]);
}

#[test]
fn an_unknown_zoo_model_or_a_crate_model_with_no_crate_is_a_usage_error() {
    let out = memory(&["--model", "zoo::no-such-model"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("zoo::no-such-model"));
    // A model in the user's crate is built as `check` builds it (tests/it/harness_e2e.rs); with no
    // crate around, that is a usage error, and nothing is built.
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["--color", "never", "memory", "--model", "crate::Net"])
        .current_dir(empty.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("Cargo.toml"), "{err}");
}
