//! End to end: a fresh crate holding a tiny candle LM (`examples/tinylm`: candle-nn's default
//! LayerNorm, no mldebug in its Cargo.toml) is checked with one command and no edits.
//! grad-flow fails, names the cut ("up to `ln_f`") and points at the `layer_norm(` lines; the
//! crate is byte-for-byte unchanged afterwards; the differentiable twin passes; a real batch
//! whose labels are all masked fails label-mask.
//!
//! Every copy builds into the target dir the other harness tests share (the workspace's, see
//! `harness_support`), so candle is not compiled again for them.

use crate::harness_support;

use harness_support::{e2e_target, mldebug, repo, show, CrateCopy};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A copy of `examples/tinylm` with `src/lib.rs` passed through `edit`, built once with plain
/// `cargo build` (the user's own dev build, which the first check reuses).
fn tinylm_copy(edit: impl Fn(String) -> String) -> CrateCopy {
    let src = repo().join("examples").join("tinylm");
    let read = |f: &str| std::fs::read(src.join(f)).unwrap();
    let lib = std::fs::read_to_string(src.join("src/lib.rs")).unwrap();
    let dir = CrateCopy::new(
        "tinylm",
        &[
            (
                "Cargo.toml",
                harness_support::e2e_manifest(&String::from_utf8(read("Cargo.toml")).unwrap())
                    .into_bytes(),
            ),
            ("Cargo.lock", harness_support::workspace_lock()),
            ("src/lib.rs", edit(lib).into_bytes()),
        ],
    );
    let out = harness_support::cargo(dir.path(), &["build", "--offline", "--quiet"]);
    assert!(out.status.success(), "{}", show(&out));
    dir
}

/// Every file under `dir` (but `target/`) with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "target") {
                    stack.push(p);
                }
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn grad_flow(out: &Output) -> serde_json::Value {
    let r: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{}", show(out)));
    r["checks"][0].clone()
}

const ONE_COMMAND: &[&str] = &[
    "--model",
    "crate::TinyLm",
    "--forward",
    "TinyLm::forward",
    "--input",
    "tokens:16x32",
    "--vocab",
    "48",
    "--offline",
    "--json",
];

#[test]
fn an_unedited_crate_fails_grad_flow_naming_the_cut_and_the_layer_norm_lines() {
    let krate = tinylm_copy(|lib| lib);
    let before = snapshot(krate.path());
    let lib = std::fs::read_to_string(krate.path().join("src/lib.rs")).unwrap();
    let norm_lines: Vec<usize> = lib
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(" layer_norm(") && !l.trim_start().starts_with("use "))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(norm_lines.len(), 2, "the block's norm and ln_f");

    for seed in ["0", "1"] {
        let mut args = vec!["check", "grad-flow", "--seed", seed];
        args.extend_from_slice(ONE_COMMAND);
        let out = mldebug(krate.path(), &args);
        assert_eq!(out.status.code(), Some(1), "{}", show(&out));
        let f = grad_flow(&out);
        assert_eq!(f["status"], "fail", "{f}");
        let summary = f["summary"].as_str().unwrap();
        assert!(summary.contains("everything up to `ln_f`"), "{summary}");
        assert!(summary.contains("`head` does"), "{summary}");
        let details: Vec<&str> = f["details"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap())
            .collect();
        for line in &norm_lines {
            let at = format!("src/lib.rs:{line}:");
            let hit = details
                .iter()
                .find(|d| d.starts_with(&at))
                .unwrap_or_else(|| panic!("no {at} in {details:#?}"));
            assert!(
                hit.contains("`layer_norm(`") && hit.contains("layer_norm_slow"),
                "{hit}"
            );
        }
        assert!(
            f["metrics"].get("graph_cuts").is_none(),
            "no traced layers: the cut count is unknown, not 0: {f}"
        );
        assert!(
            details.iter().any(|d| d.contains("not traced")),
            "{details:?}"
        );
    }
    assert!(
        before == snapshot(krate.path()),
        "the user's crate must be byte-for-byte unchanged"
    );
}

#[test]
fn the_differentiable_twin_passes_grad_flow_over_seeds() {
    // No bias: candle-nn's LayerNorm then takes its differentiable path.
    let clean = tinylm_copy(|lib| {
        let fixed = lib.replace(
            "layer_norm(DIM, 1e-5, ",
            "layer_norm(DIM, candle_nn::LayerNormConfig { eps: 1e-5, remove_mean: true, affine: false }, ",
        );
        assert_ne!(fixed, lib);
        fixed
    });
    for seed in ["0", "1", "2"] {
        let mut args = vec!["check", "grad-flow", "--seed", seed];
        args.extend_from_slice(ONE_COMMAND);
        let out = mldebug(clean.path(), &args);
        let f = grad_flow(&out);
        assert!(
            f["status"] == "pass" || f["status"] == "warn",
            "seed {seed}: {f}"
        );
        assert_eq!(f["metrics"]["params_without_grad"], 0.0, "{f}");
    }
}

#[test]
fn a_real_batch_with_every_label_masked_fails_label_mask() {
    use mldebug_diagnostics::candle_core::{Device, Tensor};
    let krate = tinylm_copy(|lib| lib);
    let batch = krate.path().join("batch.safetensors");
    let d = Device::Cpu;
    let input = Tensor::from_vec((0..64u32).map(|i| 1 + i % 40).collect(), (4, 16), &d).unwrap();
    let targets = Tensor::from_vec(vec![-100i64; 64], (4, 16), &d).unwrap();
    mldebug_diagnostics::candle_core::safetensors::save(
        &[("input", input), ("targets", targets)]
            .into_iter()
            .collect(),
        &batch,
    )
    .unwrap();
    let out = mldebug(
        krate.path(),
        &[
            "check",
            "label-mask",
            "--model",
            "crate::TinyLm",
            "--forward",
            "TinyLm::forward",
            "--batch",
            "batch.safetensors",
            "--offline",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let f = grad_flow(&out);
    assert_eq!(f["check"], "label-mask");
    assert_eq!(f["status"], "fail", "{f}");
    assert!(f["summary"].as_str().unwrap().contains("is -100"), "{f}");
}

/// A second model for the crate: an embedding and a head, no LayerNorm, so every parameter gets
/// a gradient (TinyLm's LayerNorms cut all but `head`'s).
const TINY_MLP: &str = r#"
/// An embedding and a head: every parameter learns.
pub struct TinyMlp {
    embed: Embedding,
    head: Linear,
}

impl TinyMlp {
    pub fn new(vb: VarBuilder) -> Result<TinyMlp> {
        Ok(TinyMlp {
            embed: embedding(VOCAB, DIM, vb.pp("embed"))?,
            head: linear(DIM, VOCAB, vb.pp("head"))?,
        })
    }

    pub fn forward(&self, tokens: &Tensor) -> Result<Tensor> {
        self.head.forward(&self.embed.forward(tokens)?.gelu()?)
    }
}
"#;

/// `mldebug` started in `dir` as `harness_support::mldebug` runs it, without waiting for it.
fn spawn_mldebug(dir: &Path, args: &[String]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", e2e_target())
        .env("RUST_BACKTRACE", "0")
        .env_remove("RUSTFLAGS")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn two_runs_at_once_on_one_crate_each_report_their_own_model() {
    let krate = tinylm_copy(|lib| format!("{lib}{TINY_MLP}"));
    let args = |ty: &str| {
        [
            "check",
            "grad-flow",
            "--model",
            &format!("crate::{ty}"),
            "--forward",
            &format!("{ty}::forward"),
            "--input",
            "tokens:16x32",
            "--vocab",
            "48",
            "--offline",
            "--json",
        ]
        .map(String::from)
    };
    // Started together: each rewrites the one harness of this crate.
    let lm = spawn_mldebug(krate.path(), &args("TinyLm"));
    let mlp = spawn_mldebug(krate.path(), &args("TinyMlp"));
    let (lm, mlp) = (
        lm.wait_with_output().unwrap(),
        mlp.wait_with_output().unwrap(),
    );

    let report = |out: &Output| -> serde_json::Value {
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{}", show(out)))
    };
    let (lm_report, mlp_report) = (report(&lm), report(&mlp));
    assert_eq!(lm_report["model"], "crate::TinyLm", "{}", show(&lm));
    assert_eq!(mlp_report["model"], "crate::TinyMlp", "{}", show(&mlp));
    let lm_f = &lm_report["checks"][0];
    let mlp_f = &mlp_report["checks"][0];
    assert_eq!(lm.status.code(), Some(1), "{}", show(&lm));
    assert_eq!(
        lm_f["status"], "fail",
        "TinyLm's LayerNorms cut the graph: {lm_f}"
    );
    assert!(
        lm_f["metrics"]["params_without_grad"].as_f64().unwrap() > 0.0,
        "{lm_f}"
    );
    assert_eq!(mlp.status.code(), Some(0), "{}", show(&mlp));
    assert_eq!(mlp_f["metrics"]["params_without_grad"], 0.0, "{mlp_f}");
}

#[test]
fn every_command_a_report_suggests_runs_as_printed() {
    let krate = tinylm_copy(|lib| lib);
    // Flags a shell must see quoted (`(`, `&`), and flags without which nothing runs.
    let model_flags = [
        "--model",
        "crate::TinyLm",
        "--new",
        "TinyLm::new",
        "--forward",
        "TinyLm::forward(&input)",
        "--input",
        "tokens:16x32",
        "--vocab",
        "48",
        "--offline",
    ];
    let mut args = vec!["check", "all", "--json"];
    args.extend_from_slice(&model_flags);
    let out = mldebug(krate.path(), &args);
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{}", show(&out)));
    let mut suggested: Vec<String> = Vec::new();
    for f in report["checks"].as_array().unwrap() {
        suggested.push(f["next"].as_str().unwrap().to_string());
        for d in f["details"].as_array().unwrap() {
            let d = d.as_str().unwrap();
            if let Some(at) = d.find("mldebug check ") {
                suggested.push(d[at..].trim_end_matches(['`', ')', '.']).to_string());
            }
        }
    }
    suggested.sort();
    suggested.dedup();
    let with_flags = "--model crate::TinyLm --new TinyLm::new --forward 'TinyLm::forward(&input)' \
                      --input tokens:16x32 --vocab 48 --offline";
    let checks: Vec<&String> = suggested
        .iter()
        .filter(|c| c.starts_with("mldebug check "))
        .collect();
    assert!(!checks.is_empty(), "no check suggested: {suggested:#?}");
    for c in &checks {
        assert!(c.contains(with_flags), "{c}");
    }
    // Run each through a shell, as a person pasting it would.
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_mldebug")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for command in &suggested {
        let out = Command::new("sh")
            .args(["-c", command])
            .current_dir(krate.path())
            .env("PATH", &path)
            .env("CARGO_TARGET_DIR", e2e_target())
            .env("RUST_BACKTRACE", "0")
            .env_remove("RUSTFLAGS")
            .output()
            .unwrap();
        let code = out.status.code();
        assert!(
            !matches!(code, Some(2) | Some(70) | Some(127) | None),
            "`{command}` does not run as printed: {}",
            show(&out)
        );
    }
}
