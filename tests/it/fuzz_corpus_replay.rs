//! The fuzz targets' corpora (`fuzz/corpus/<target>/`) replayed through
//! `mldebug::fuzzing::run`, so every input a fuzzer ever found interesting stays a regression
//! test without nightly or cargo-fuzz. Seeds named `valid-*` must be read without an error: that
//! proves each target's scratch layout and framing reach its parser.
//!
//! The seeds are written by `write_seeds` (ignored; run it after changing a generator:
//! `cargo test --test it fuzz_corpus_replay::write_seeds -- --ignored`). Inputs found by fuzzing are
//! added by hand, minimised, next to them.

use mldebug::fuzzing::{run, FILE_MARKER, RECORD_SEPARATOR, TARGETS};
use mldebug_sweep_writers::{
    event_file, file_version_event, scalar_event, wandb_history_record, wandb_log,
    wandb_run_record, Encoding,
};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// No input may take more than this many times its target's median input, plus the slack
/// below: a sanity bound against a regression to quadratic (or unbounded) time, loose enough
/// for a busy machine and an unoptimised build.
const SLOW_RATIO: u32 = 1000;
const SLOW_SLACK: Duration = Duration::from_secs(2);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn corpus(target: &str) -> PathBuf {
    root().join("fuzz/corpus").join(target)
}

fn files(target: &str) -> Vec<PathBuf> {
    let dir = corpus(target);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn every_target_has_a_corpus_and_every_corpus_a_target() {
    for t in TARGETS {
        assert!(!files(t).is_empty(), "fuzz/corpus/{t}/ holds no input");
    }
    for e in std::fs::read_dir(root().join("fuzz/corpus")).unwrap() {
        let dir = name(&e.unwrap().path());
        assert!(
            TARGETS.contains(&dir.as_str()),
            "fuzz/corpus/{dir}/ belongs to no target"
        );
    }
    let manifest = std::fs::read_to_string(root().join("fuzz/Cargo.toml")).unwrap();
    for t in TARGETS {
        assert!(
            manifest.contains(&format!("name = \"{t}\"")),
            "fuzz/Cargo.toml has no binary for {t}"
        );
    }
}

#[test]
fn every_corpus_input_replays_without_a_panic() {
    for t in TARGETS {
        let mut times = Vec::new();
        for p in files(t) {
            let data = std::fs::read(&p).unwrap();
            let start = Instant::now();
            let outcome = std::panic::catch_unwind(|| run(t, &data));
            times.push((start.elapsed(), name(&p)));
            assert!(outcome.is_ok(), "{t}: {} panics", p.display());
        }
        times.sort();
        let median = times[times.len() / 2].0;
        let (slowest, which) = times.last().unwrap();
        assert!(
            *slowest <= median * SLOW_RATIO + SLOW_SLACK,
            "{t}: {which} took {slowest:?}, the median input {median:?}"
        );
    }
}

#[test]
fn valid_seeds_are_read() {
    let mut seen = 0;
    for t in TARGETS {
        for p in files(t)
            .into_iter()
            .filter(|p| name(p).starts_with("valid-"))
        {
            seen += 1;
            assert!(
                run(t, &std::fs::read(&p).unwrap()),
                "{t}: {} is not read",
                p.display()
            );
        }
    }
    assert!(seen >= TARGETS.len(), "only {seen} valid seeds");
}

#[test]
fn an_unknown_target_is_a_harness_error() {
    let outcome = std::panic::catch_unwind(|| run("no_such_target", b""));
    assert!(outcome.is_err());
}

/// Joins records for the `*_records` targets.
fn records(parts: &[Vec<u8>]) -> Vec<u8> {
    parts.join(RECORD_SEPARATOR)
}

/// The data of each TFRecord in an event file (framing assumed valid).
fn unframe_tfrecords(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut off = 0;
    while off + 12 <= bytes.len() {
        let len = u64::from_le_bytes(bytes[off..off + 8].try_into().unwrap()) as usize;
        out.push(bytes[off + 12..off + 12 + len].to_vec());
        off += 12 + len + 4;
    }
    out
}

/// The whole records of a W&B run log (framing assumed valid).
fn unframe_wandb(bytes: &[u8]) -> Vec<Vec<u8>> {
    const BLOCK: usize = 32 * 1024;
    let mut out = Vec::new();
    let mut pending = Vec::new();
    let mut pos = 7;
    while pos + 7 <= bytes.len() {
        if BLOCK - pos % BLOCK < 7 {
            pos += BLOCK - pos % BLOCK;
            continue;
        }
        let len = usize::from(u16::from_le_bytes([bytes[pos + 4], bytes[pos + 5]]));
        let kind = bytes[pos + 6];
        if kind == 0 {
            break;
        }
        pending.extend_from_slice(&bytes[pos + 7..pos + 7 + len]);
        if kind == 1 || kind == 4 {
            out.push(std::mem::take(&mut pending));
        }
        pos += 7 + len;
    }
    out
}

/// A catalog folder as the `catalog` target's input.
fn catalog_input(dir: &Path) -> Vec<u8> {
    let mut paths = vec!["SKILL.md".to_string(), "PLAYBOOK.md".to_string()];
    for (sub, ext) in [("refs", "md"), ("evidence", "yaml")] {
        let mut names: Vec<String> = std::fs::read_dir(dir.join(sub))
            .unwrap()
            .map(|e| name(&e.unwrap().path()))
            .filter(|n| n.ends_with(ext))
            .collect();
        names.sort();
        paths.extend(names.into_iter().map(|n| format!("{sub}/{n}")));
    }
    let mut out = Vec::new();
    for p in paths {
        out.extend_from_slice(format!("{FILE_MARKER}{p}\n").as_bytes());
        out.extend(std::fs::read(dir.join(&p)).unwrap());
    }
    out
}

/// The size of the pieces the real catalog files are cut into for seeds.
const CATALOG_PIECE_BYTES: usize = 4000;

/// `text` cut before heading lines into pieces of at most `max` bytes (a longer section is a
/// piece of its own).
fn sections(text: &str, max: usize) -> Vec<String> {
    let mut out = vec![String::new()];
    for line in text.split_inclusive('\n') {
        let last = out.last_mut().unwrap();
        if line.starts_with('#') && !last.is_empty() && last.len() + line.len() > max {
            out.push(String::new());
        }
        out.last_mut().unwrap().push_str(line);
    }
    out
}

/// The seed inputs of every target: (target, file name, bytes). A table of literal inputs, one
/// block per target: long, but split it and the blocks would only pass the table around.
#[allow(clippy::too_many_lines)]
fn seeds() -> Vec<(&'static str, String, Vec<u8>)> {
    let mut s: Vec<(&str, String, Vec<u8>)> = Vec::new();
    let mut add = |t: &'static str, n: &str, b: &[u8]| s.push((t, n.to_string(), b.to_vec()));
    let fixtures = root().join("tests/fixtures");
    let sweep_fixtures = root().join("crates/sweep/tests/fixtures");
    let read = |rel: &str| std::fs::read(sweep_fixtures.join(rel)).unwrap();

    add(
        "run_json",
        "valid-run-object.json",
        br#"{"name": "adam-1", "group": "lr=3e-4", "seed": 1,
 "metrics": {"val_loss": 0.31, "diverged": NaN},
 "config": {"optimizer": {"name": "adam", "lr": 3e-4}, "task": "cifar10"},
 "history": {"val_loss": [[200, 0.31], [100, 0.5]], "acc": [0.1, 0.2]}}"#,
    );
    add(
        "run_json",
        "valid-wandb-dump.json",
        br#"[{"id": "r1", "name": "fiery-r1", "group": "B",
 "config": {"seed": 1, "method": "B", "env": "HalfCheetah-v4"},
 "summary": {"val/acc": 0.7, "_step": 99, "_wandb": {"runtime": 12}, "eval": {"return": 1234.5},
  "samples": {"_type": "table-file", "path": "x"}},
 "history": [{"_step": 0, "val/acc": 0.5, "_runtime": 1.0, "media": {"_type": "image-file"}},
  {"_step": 99, "val/acc": 0.7}]},
 {"id": "r2", "summary": {"val/acc": -Infinity}, "config": {"seed": 2}}]"#,
    );
    add(
        "run_json",
        "valid-trainer-state.json",
        br#"{"best_metric": 0.25, "best_model_checkpoint": null,
 "epoch": 1.0, "global_step": 100, "max_steps": 100, "num_train_epochs": 1,
 "log_history": [{"epoch": 0.5, "step": 50, "loss": 1.0, "learning_rate": 1e-05, "grad_norm": 2.5},
  {"epoch": 1.0, "step": 100, "loss": 0.5, "learning_rate": 1e-05},
  {"epoch": 1.0, "step": 100, "eval_loss": 0.25, "eval_accuracy": 0.91}]}"#,
    );
    add("run_json", "seed-extreme-numbers.json", br#"{"metrics": {"a": 1e308, "b": -1e308, "c": 1e400, "d": 5e-324, "e": Infinity, "f": 18446744073709551616, "g": -0.0}}"#);
    add(
        "run_json",
        "seed-model-config.json",
        br#"{"architectures": ["Bert"], "hidden_size": 8}"#,
    );

    add("run_jsonl", "valid-history-rows.jsonl", b"{\"step\": 100, \"loss\": 0.9, \"phase\": \"train\"}\n\n{\"step\": 200, \"loss\": 0.4, \"val/acc\": 0.8}\n");
    add(
        "run_jsonl",
        "valid-long-form.jsonl",
        br#"{"run": "a", "seed": 0, "group": "A", "step": 1, "metric": "val/acc", "value": 0.5}
{"run": "b", "seed": 0, "group": "B", "step": 1, "metric": "val/acc", "value": 0.6}
{"run": "a", "seed": 0, "group": "A", "step": 2, "metric": "val/acc", "value": 0.7}
"#,
    );
    add("run_jsonl", "valid-run-objects.jsonl", b"{\"name\": \"x\", \"seed\": 1, \"metrics\": {\"loss\": 1.5}}\n{\"name\": \"y\", \"seed\": \"s2\", \"metrics\": {\"loss\": -Infinity}}\n");
    add(
        "run_jsonl",
        "seed-message-log.jsonl",
        b"{\"level\": \"info\", \"msg\": \"started\"}\n",
    );

    let points = [
        (1_700_000_000.0, 0, "train/loss", 2.0),
        (1_700_000_001.0, 10, "train/loss", 1.5),
        (1_700_000_001.0, 10, "val/acc", 0.625),
    ];
    for (enc, n) in [
        (Encoding::Simple, "simple"),
        (Encoding::TensorFloatVal, "float-val"),
        (Encoding::TensorDoubleContent, "double-content"),
    ] {
        add("tfevents", &format!("valid-{n}"), &event_file(&points, enc));
        let mut parts = vec![file_version_event(1_700_000_000.0)];
        parts.extend(
            points
                .iter()
                .map(|&(w, st, tag, v)| scalar_event(w, st, tag, v, enc)),
        );
        add("tfevents_records", &format!("valid-{n}"), &records(&parts));
    }
    for (rel, n) in [
        (
            "sweep/tensorboardx/events.out.tfevents.1700000000.fixture",
            "tensorboardx",
        ),
        (
            "sweep/tensorboardx-hparams/lr0.1_seed2/hp/events.out.tfevents.1795241745.vm",
            "hparams",
        ),
    ] {
        let bytes = read(rel);
        let prefix = if n == "hparams" { "seed" } else { "valid" };
        add("tfevents", &format!("{prefix}-{n}"), &bytes);
        add(
            "tfevents_records",
            &format!("{prefix}-{n}"),
            &records(&unframe_tfrecords(&bytes)),
        );
    }

    let wandb = read("sweep/wandb-offline/offline-run-20261121_061247-f6n2mr1x/run-f6n2mr1x.wandb");
    add("wandb_log", "valid-offline-run.wandb", &wandb);
    add(
        "wandb_records",
        "valid-offline-run",
        &records(&unframe_wandb(&wandb)),
    );
    let made = vec![
        wandb_run_record(
            "abc",
            "bright-sun-1",
            "adamw",
            &[("seed", "3"), ("optimizer", "{\"name\": \"adamw\"}")],
        ),
        wandb_history_record(0, &[("loss", "2.0"), ("val/acc", "0.5")]),
        wandb_history_record(10, &[("loss", "NaN"), ("phase", "\"train\"")]),
    ];
    add("wandb_log", "valid-made.wandb", &wandb_log(&made));
    add("wandb_records", "valid-made", &records(&made));

    add("wandb_config", "valid-config.yaml", b"wandb_version: 1\n\n_wandb:\n  desc: null\n  value:\n    python_version: 3.11.4\nlr:\n  desc: null\n  value: 0.001\noptimizer:\n  value:\n    name: adam\n    betas: [0.9, 0.999]\nmethod:\n  value: baseline\nseed:\n  value: 11\n");
    add(
        "wandb_config",
        "seed-anchors.yaml",
        b"base: &b {lr: 0.1, wd: .inf}\nrun:\n  <<: *b\n  tags: !!set {a, b}\n  when: 2024-01-01\n",
    );

    add("csv", "valid-lightning.csv", b"epoch,step,train_loss,val_loss,val_acc\n0,49,0.9,,\n0,49,,0.8,0.55\n1,99,0.5,,\n1,99,,0.6,0.7\n");
    add("csv", "valid-wandb-runs-table.csv", b"\"Name\",\"State\",\"Notes\",\"User\",\"Tags\",\"Created\",\"Runtime\",\"Sweep\",\"lr\",\"seed\",\"method\",\"accuracy\",\"_step\"\n\"bold-1\",\"finished\",\"a note, with a comma\",\"me\",\"\",\"2024-01-01T00:00:00.000Z\",\"61\",\"\",\"0.001\",\"0\",\"new\",\"0.91\",\"99\"\n\"calm-2\",\"crashed\",\"-\",\"me\",\"\",\"2024-01-01T00:00:00.000Z\",\"12\",\"\",\"0.001\",\"1\",\"old\",\"NaN\",\"7\"\n");
    add("csv", "valid-wandb-line-panel.csv", b"\"Step\",\"adam-s1 - val/acc\",\"adam-s1 - val/acc__MIN\",\"adam-s1 - val/acc__MAX\",\"sgd-s1 - val/acc\"\r\n0,0.5,0.5,0.5,0.4\r\n10,0.7,0.69,0.71,\r\n20,,,,0.6\r\n");
    add(
        "csv",
        "seed-python-repr.csv",
        b"name,summary,config\nr1,\"{'loss': 0.1}\",\"{'lr': 0.1}\"\n",
    );

    add("lightning_hparams", "valid-hparams.yaml", b"seed: 7\nmodel:\n  hidden: 64\n  act: !!python/name:torch.nn.ReLU ''\noptim: adamw\nbetas: [0.9, 0.999]\nlr: 1.0e-3\nnan: .nan\n");
    add("lightning_hparams", "valid-empty.yaml", b"");

    add("mlflow_meta", "valid-meta.yaml", b"artifact_uri: file:///x/mlruns/0/aaa111/artifacts\nend_time: 1700000100000\nentry_point_name: ''\nexperiment_id: '0'\nlifecycle_stage: active\nrun_id: aaa111\nrun_name: bright-owl-1\nrun_uuid: aaa111\nsource_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: 1700000000000\nstatus: 3\ntags: []\nuser_id: me\n");
    add(
        "mlflow_meta",
        "seed-deleted.yaml",
        b"run_id: x\nlifecycle_stage: deleted\n",
    );
    add(
        "mlflow_metric",
        "valid-metric",
        b"1700000000000 1.5\n1700000001000 nan 1\n1700000002000 0.25 2\n",
    );
    add(
        "mlflow_metric",
        "seed-bad-fields",
        b"1700000000000 1.5 0 9\n",
    );
    add("mlflow_param", "valid-seed", b"3");
    add("mlflow_param", "valid-text", b"run s12 \xff\n");

    add(
        "catalog",
        "valid-fixture-catalog",
        &catalog_input(&fixtures.join("catalog")),
    );
    // The real files in pieces of a few kilobytes: a fuzzer mutates small inputs faster.
    for f in [
        "SKILL.md",
        "PLAYBOOK.md",
        "refs/diagnostics.md",
        "refs/metric_stuck.md",
    ] {
        let text = std::fs::read_to_string(root().join(f)).unwrap();
        for (k, piece) in sections(&text, CATALOG_PIECE_BYTES).iter().enumerate() {
            let input = format!("{FILE_MARKER}{f}\n{piece}");
            add(
                "catalog",
                &format!("valid-{}-{k:02}", f.replace('/', "-")),
                input.as_bytes(),
            );
        }
    }
    add(
        "catalog",
        "seed-footnote-brackets.md",
        "[^".repeat(2000).as_bytes(),
    );

    add("evidence", "valid-fuzz-source.yaml", b"id: fuzz-source\nauthor: A. Person\ntitle: A title\nurl: https://example.com/x\ndate: '2019-04-25'\nstatus: verified-exact\nexcerpts:\n- id: fuzz-overfit\n  text: Overfit a single batch.\n  context: First, overfit a single batch. If not, there is a bug somewhere.\n  status: verified-exact\n  topics: [overfit-batch]\n- id: fuzz-bug\n  text: Overfit a single batch. If not, there is a bug somewhere.\n  status: unverified\n  note: a note\n  verified_against: nothing\n");
    for f in ["karpathy-recipe.yaml", "rahtz-reproducing-rl.yaml"] {
        add(
            "evidence",
            &format!("seed-{f}"),
            &std::fs::read(root().join("evidence").join(f)).unwrap(),
        );
    }

    let skill = std::fs::read_to_string(root().join("SKILL.md")).unwrap();
    let front = skill
        .strip_prefix("---\n")
        .unwrap()
        .split("\n---\n")
        .next()
        .unwrap();
    add("skill_front_matter", "valid-skill.yaml", front.as_bytes());
    add("skill_front_matter", "valid-all-keys.yaml", b"name: my-skill\ndescription: >\n  Folded text\n  over lines.\nlicense: MIT\ncompatibility: any\nmetadata:\n  version: '1'\nallowed-tools: [Bash, Read]\n");
    add(
        "skill_front_matter",
        "seed-bad-name.yaml",
        b"name: -Bad--Name-\ndescription: <b>\nextra: 1\n",
    );
    for (n, q) in [
        ("valid-nan", "loss is NaN after a few steps"),
        ("valid-typos", "los stays flat wont overfitt one batch"),
        (
            "valid-numbers",
            "lr 3e-4 batch 1024 loss 0.693 fp16 1e5 OOM at 24GB",
        ),
        (
            "valid-camel",
            "LayerNorm RmsNorm softmax_last_dim didn't help; gradients vanish",
        ),
    ] {
        add("search_query", n, q.as_bytes());
    }
    let configs = root().join("crates/memory/tests/fixtures/configs");
    for n in ["tinyllama-1.1b", "gpt2", "bert-base-uncased", "pythia-1b"] {
        let bytes = std::fs::read(configs.join(format!("{n}.json"))).unwrap();
        add("memory_config", &format!("valid-{n}.json"), &bytes);
    }
    // At the readers' limits: every product the estimate forms must stay finite and exact.
    add(
        "memory_config",
        "limits.json",
        br#"{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 100000, "intermediate_size": 1000000, "vocab_size": 10000000, "head_dim": 1000000}"#,
    );
    add(
        "memory_config",
        "largest.json",
        br#"{"model_type": "phi3", "hidden_size": 1000000, "num_attention_heads": 1, "num_key_value_heads": 1, "head_dim": 1000000, "num_hidden_layers": 100000, "intermediate_size": 1000000, "vocab_size": 10000000}"#,
    );
    add(
        "memory_config",
        "indivisible.json",
        br#"{"model_type": "gpt2", "n_embd": 7, "n_head": 3}"#,
    );

    let doctor = fixtures.join("doctor");
    let nan_batch = std::fs::read(doctor.join("hf/nan-batch/stdout.log")).unwrap();
    add("text_log", "valid-hf-nan-batch.log", &nan_batch);
    let lightning = std::fs::read_to_string(doctor.join("lightning/leak/stdout.log")).unwrap();
    let head: String = lightning.split_inclusive('\n').take(40).collect();
    add("text_log", "valid-lightning-head.log", head.as_bytes());
    add(
        "text_log",
        "valid-step-lines.log",
        b"step 1 | loss 2.31 | lr 3e-4\nStep [2/100], Loss: 2.2\nstep 3 loss nan\n",
    );
    add("text_log", "valid-keras.log", b"Epoch 1/2\n10/10 [==========] - 1s 5ms/step - loss: 0.9\nEpoch 2/2\n10/10 [==========] - 1s 6ms/step - loss: 0.5\n");
    let bar = |n: usize, loss: &str| {
        format!("Epoch 0:  {n:>2}%|█         | {n}/100 [00:01<00:09, 9.0it/s, loss={loss}]\r")
    };
    add(
        "text_log",
        "valid-tqdm-no-newline.log",
        (1..=5)
            .map(|n| bar(n, "0.7"))
            .collect::<String>()
            .as_bytes(),
    );
    add(
        "text_log",
        "seed-overflow.log",
        b"step 1 | loss 9e307\nstep 2 | loss -9e307\nstep 3 | loss 1.7976931348623157e308\nstep 1e308 | loss 5e-324\n",
    );
    add("text_log", "seed-zeros.log", &[0u8; 4096]);

    // Run traces: whole, after a byte-order mark, cut mid-line, with numbers past every integer
    // type, and lines far longer than a record.
    let trace = "{\"kind\": \"start\", \"trace\": 1, \"pid\": 7, \"rank\": 0}\n\
        {\"kind\": \"model\", \"model\": 0, \"class\": \"Net\", \"parameters\": 10, \"trainable\": 10}\n\
        {\"kind\": \"optimizer\", \"optimizer\": 0, \"class\": \"SGD\", \"numel\": 10, \"in_models\": 10}\n\
        {\"kind\": \"step\", \"step\": 1, \"loss\": 2.5, \"grad_norm\": 1.0, \"changed\": 2, \"checked\": 2}\n\
        {\"kind\": \"step\", \"step\": 2, \"loss\": \"NaN\", \"grad_norm\": \"inf\"}\n\
        {\"kind\": \"end\", \"reason\": \"steps\", \"steps\": 2}\n";
    add("run_trace", "valid-trace.jsonl", trace.as_bytes());
    add(
        "run_trace",
        "seed-bom.jsonl",
        format!("\u{feff}{trace}").as_bytes(),
    );
    add(
        "run_trace",
        "valid-cut.jsonl",
        &trace.as_bytes()[..trace.len() - 12],
    );
    add(
        "run_trace",
        "seed-huge-numbers.jsonl",
        trace
            .replace("\"step\": 2,", "\"step\": 9223372036854775808,")
            .replace("\"pid\": 7", "\"pid\": 18446744073709551616")
            .replace("2.5", "1e400")
            .as_bytes(),
    );
    add(
        "run_trace",
        "seed-long-line.jsonl",
        format!(
            "{}{{\"kind\": \"step\", \"step\": 3, \"x\": \"{}\"}}\n",
            trace,
            "a".repeat(5 << 20)
        )
        .as_bytes(),
    );

    let pieces = |p: &[&[u8]]| records(&p.iter().map(|x| x.to_vec()).collect::<Vec<_>>());
    let jsonl = mldebug::fuzzing::TO_JSONL;
    let rewrite = mldebug::fuzzing::REWRITE;
    add(
        "watch",
        "valid-growing",
        &pieces(&[
            b"step 1 | loss 2.0\n",
            b"step 2 | loss 1.9\nstep 3 | lo",
            b"ss 1.8\n",
            &[jsonl, b"{\"step\": 1, \"loss\": 0.9}\n"].concat(),
            &[jsonl, b"{\"step\": 2, \"loss\": NaN}\n"].concat(),
        ]),
    );
    add(
        "watch",
        "valid-bar-redraws",
        &pieces(&[
            bar(1, "0.9").as_bytes(),
            bar(2, "0.8").as_bytes(),
            format!("{}{}", bar(3, "0.7"), bar(4, "nan")).as_bytes(),
        ]),
    );
    add(
        "watch",
        "valid-rewrites",
        &pieces(&[
            b"step 1 | loss 2.0\nstep 2 | loss 1.9\n",
            &[
                rewrite,
                b"step 1 | loss 3.0\nstep 2 | loss nan\nstep 3 | loss 2.9\n",
            ]
            .concat(),
            &[
                rewrite,
                b"step 1 | loss 3.0\nstep 2 | loss 2.9\nstep 3 | loss 2.9\n",
            ]
            .concat(),
            &[jsonl, rewrite, b"{\"step\": 5, \"loss\": 0.5}\n"].concat(),
        ]),
    );
    add(
        "watch",
        "seed-corrupt-jsonl",
        &pieces(&[b"step 1 | loss 1\n", &[jsonl, b"{\"step\": "].concat()]),
    );
    s
}

/// Writes the seeds into `fuzz/corpus/<target>/`, replacing the files of the same name.
#[test]
#[ignore = "writes the seed corpora into the source tree"]
fn write_seeds() {
    for (t, n, bytes) in seeds() {
        let dir = corpus(t);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(n), bytes).unwrap();
    }
}
