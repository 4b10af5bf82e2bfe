//! The sweep readers on small files in each real format, written by the tests themselves.

use mldebug_sweep::readers::{read_paths, read_paths_detailed};
use mldebug_sweep::record::RunRecord;
use mldebug_sweep_writers::*;
use serde_json::json;
use std::path::{Path, PathBuf};

fn read(paths: &[&Path]) -> Vec<RunRecord> {
    let paths: Vec<PathBuf> = paths.iter().map(|p| p.to_path_buf()).collect();
    read_paths(&paths).unwrap_or_else(|e| panic!("read failed: {e}"))
}

fn one(path: &Path) -> RunRecord {
    let mut runs = read(&[path]);
    assert_eq!(runs.len(), 1, "{runs:#?}");
    runs.remove(0)
}

#[test]
fn our_json_run_file() {
    let t = tempfile::tempdir().unwrap();
    let p = write(
        t.path(),
        "a.json",
        r#"{"name": "adam-1", "group": "lr=3e-4", "seed": 1,
            "metrics": {"val_loss": 0.31, "diverged": NaN},
            "config": {"optimizer": {"name": "adam", "lr": 3e-4}, "task": "cifar10"},
            "history": {"val_loss": [[200, 0.31], [100, 0.5]], "acc": [0.1, 0.2]}}"#,
    );
    let r = one(&p);
    assert_eq!(r.name, "adam-1");
    assert_eq!(r.group.as_deref(), Some("lr=3e-4"));
    assert_eq!(r.seed.as_deref(), Some("1"));
    assert_eq!(r.task.as_deref(), Some("cifar10"));
    assert_eq!(r.config["optimizer.name"], json!("adam"));
    assert_eq!(r.config["optimizer.lr"], json!(3e-4));
    assert_eq!(r.metrics["val_loss"], 0.31);
    assert!(r.metrics["diverged"].is_nan(), "Python's NaN token is read");
    assert_eq!(r.history["val_loss"], [(100.0, 0.5), (200.0, 0.31)]);
    assert_eq!(r.history["acc"], [(0.0, 0.1), (1.0, 0.2)]);
    assert_eq!(
        r.metrics["acc"], 0.2,
        "history-only metrics get their last value"
    );
    assert_eq!(r.source, p);
    assert_eq!(r.place, "");
}

#[test]
fn wandb_api_dump_single_and_list() {
    let t = tempfile::tempdir().unwrap();
    // The shape of {"id": run.id, "name": run.name, "config": dict(run.config),
    // "summary": run.summary._json_dict, "history": list(run.scan_history())}.
    let run = |id: &str, seed: i64, acc: f64| {
        json!({
            "id": id, "name": format!("fiery-{id}"),
            "config": {"seed": seed, "method": "B", "env": "HalfCheetah-v4"},
            "summary": {"val/acc": acc, "_step": 99, "_wandb": {"runtime": 12},
                        "samples": {"_type": "table-file", "path": "x"},
                        "eval": {"return": 1234.5}},
            "history": [{"_step": 0, "val/acc": 0.5, "_runtime": 1.0, "media": {"_type": "image-file"}},
                        {"_step": 99, "val/acc": acc}]
        })
    };
    let single = write(t.path(), "one.json", run("abc", 3, 0.8).to_string());
    let r = one(&single);
    assert_eq!(r.name, "fiery-abc");
    assert_eq!(r.seed.as_deref(), Some("3"));
    assert_eq!(r.task.as_deref(), Some("HalfCheetah-v4"));
    assert_eq!(r.metrics["val/acc"], 0.8);
    assert_eq!(r.metrics["eval.return"], 1234.5);
    assert!(!r.metrics.contains_key("_step") && !r.metrics.contains_key("samples"));
    assert_eq!(r.history["val/acc"], [(0.0, 0.5), (99.0, 0.8)]);
    assert!(!r.history.contains_key("_runtime") && !r.history.contains_key("media"));

    let list = write(
        t.path(),
        "project.json",
        json!([run("r1", 1, 0.7), run("r2", 2, 0.9)]).to_string(),
    );
    let runs = read(&[&list]);
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1].name, "fiery-r2");
    assert_eq!(runs[1].place, "item 2");
    assert_eq!(runs[1].metrics["val/acc"], 0.9);
}

#[test]
fn jsonl_history_rows_take_the_seed_from_the_file_name() {
    let t = tempfile::tempdir().unwrap();
    let p = write(
        t.path(),
        "baseline_seed_2.jsonl",
        "{\"step\": 100, \"loss\": 0.9, \"phase\": \"train\"}\n\n{\"step\": 200, \"loss\": 0.4, \"val/acc\": 0.8}\n",
    );
    let r = one(&p);
    assert_eq!(r.name, "baseline_seed_2");
    assert_eq!(r.seed.as_deref(), Some("2"));
    assert_eq!(r.history["loss"], [(100.0, 0.9), (200.0, 0.4)]);
    assert_eq!(r.metrics["val/acc"], 0.8);
    assert!(!r.metrics.contains_key("phase"));
}

#[test]
fn jsonl_long_form_rows_and_run_objects() {
    let t = tempfile::tempdir().unwrap();
    let long = write(
        t.path(),
        "long.jsonl",
        [
            json!({"run": "a", "seed": 0, "group": "A", "step": 1, "metric": "val/acc", "value": 0.5}),
            json!({"run": "b", "seed": 0, "group": "B", "step": 1, "metric": "val/acc", "value": 0.6}),
            json!({"run": "a", "seed": 0, "group": "A", "step": 2, "metric": "val/acc", "value": 0.7}),
        ]
        .map(|v| v.to_string())
        .join("\n"),
    );
    let runs = read(&[&long]);
    assert_eq!(runs.len(), 2);
    assert_eq!(
        (runs[0].name.as_str(), runs[0].group.as_deref()),
        ("a", Some("A"))
    );
    assert_eq!(runs[0].history["val/acc"], [(1.0, 0.5), (2.0, 0.7)]);
    assert_eq!(runs[1].seed.as_deref(), Some("0"));
    assert_eq!(runs[1].place, "run b");

    let objects = write(
        t.path(),
        "runs.jsonl",
        "{\"name\": \"x\", \"seed\": 1, \"metrics\": {\"loss\": 1.5}}\n{\"name\": \"y\", \"seed\": \"s2\", \"metrics\": {\"loss\": -Infinity}}\n",
    );
    let runs = read(&[&objects]);
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1].place, "line 2");
    assert_eq!(runs[1].seed.as_deref(), Some("s2"));
    assert_eq!(runs[1].metrics["loss"], f64::NEG_INFINITY);
}

#[test]
fn hf_trainer_state_and_its_checkpoints() {
    let t = tempfile::tempdir().unwrap();
    let state = |steps: &[(u64, f64)]| {
        let mut log: Vec<_> = steps
            .iter()
            .map(|&(s, l)| json!({"epoch": s as f64 / 100.0, "step": s, "loss": l, "learning_rate": 1e-5, "grad_norm": 2.5}))
            .collect();
        log.push(json!({"epoch": 1.0, "step": steps.last().unwrap().0, "eval_loss": 0.25, "eval_accuracy": 0.91}));
        json!({"best_metric": 0.25, "best_model_checkpoint": null, "epoch": 1.0,
               "global_step": steps.last().unwrap().0, "max_steps": 100, "num_train_epochs": 1,
               "log_history": log})
        .to_string()
    };
    write(
        t.path(),
        "out_seed3/trainer_state.json",
        state(&[(50, 1.0), (100, 0.5)]),
    );
    write(
        t.path(),
        "out_seed3/checkpoint-50/trainer_state.json",
        state(&[(50, 1.0)]),
    );
    write(
        t.path(),
        "out_seed3/config.json",
        r#"{"architectures": ["Bert"], "hidden_size": 8}"#,
    );
    // Only checkpoints: the newest is the run.
    write(
        t.path(),
        "out_seed4/checkpoint-50/trainer_state.json",
        state(&[(50, 1.0)]),
    );
    write(
        t.path(),
        "out_seed4/checkpoint-100/trainer_state.json",
        state(&[(50, 1.0), (100, 0.4)]),
    );
    let outcome = read_paths_detailed(&[t.path().to_path_buf()]).unwrap();
    let runs = outcome.runs;
    assert_eq!(runs.len(), 2, "{runs:#?}");
    assert_eq!(runs[0].name, "out_seed3");
    assert_eq!(runs[0].seed.as_deref(), Some("3"));
    assert_eq!(runs[0].history["loss"], [(50.0, 1.0), (100.0, 0.5)]);
    assert_eq!(runs[0].metrics["eval_accuracy"], 0.91);
    assert_eq!(runs[0].config["global_step"], json!(100));
    assert!(!runs[0].config.contains_key("best_model_checkpoint"));
    assert_eq!(runs[1].name, "out_seed4/checkpoint-100");
    assert_eq!(runs[1].seed.as_deref(), Some("4"));
    assert_eq!(runs[1].metrics["loss"], 0.4);
    assert_eq!(
        outcome.skipped.len(),
        1,
        "the model's config.json is passed over"
    );
    assert!(outcome.skipped[0].path.ends_with("config.json"));
}

#[test]
fn lightning_csv_logger() {
    let t = tempfile::tempdir().unwrap();
    let csv = write(
        t.path(),
        "lightning_logs/my_model/version_0/metrics.csv",
        "epoch,step,train_loss,val_loss,val_acc\n0,49,0.9,,\n0,49,,0.8,0.55\n1,99,0.5,,\n1,99,,0.6,0.7\n",
    );
    write(
        t.path(),
        "lightning_logs/my_model/version_0/hparams.yaml",
        "seed: 7\nmodel:\n  hidden: 64\n  act: !!python/name:torch.nn.ReLU ''\noptim: adamw\n",
    );
    let r = one(t.path());
    assert_eq!(r.name, "lightning_logs/my_model/version_0");
    assert_eq!(r.seed.as_deref(), Some("7"));
    assert_eq!(r.config["model.hidden"], json!(64));
    assert_eq!(r.config["optim"], json!("adamw"));
    assert_eq!(r.history["val_loss"], [(49.0, 0.8), (99.0, 0.6)]);
    assert_eq!(
        r.history["epoch"],
        [(49.0, 0.0), (49.0, 0.0), (99.0, 1.0), (99.0, 1.0)]
    );
    assert_eq!(r.metrics["val_acc"], 0.7);
    assert_eq!(r.source, csv);
    // Named directly, the logger name stays with the version.
    assert_eq!(one(&csv).name, "my_model/version_0");
}

#[test]
fn wandb_run_directory() {
    let t = tempfile::tempdir().unwrap();
    let run = "sweep/seed5/wandb/run-20240101_120000-abc123";
    write(
        t.path(),
        &format!("{run}/files/wandb-summary.json"),
        r#"{"val/acc": 0.82, "loss": NaN, "_step": 999, "_runtime": 60.5, "_timestamp": 1.7e9,
            "_wandb": {"runtime": 60}, "examples": {"_type": "table-file", "path": "t.json"}}"#,
    );
    write(
        t.path(),
        &format!("{run}/files/config.yaml"),
        "wandb_version: 1\n\n_wandb:\n  desc: null\n  value:\n    python_version: 3.11.4\nlr:\n  desc: null\n  value: 0.001\noptimizer:\n  value:\n    name: adam\n    betas: [0.9, 0.999]\nmethod:\n  value: baseline\n",
    );
    write(
        t.path(),
        &format!("{run}/files/wandb-metadata.json"),
        r#"{"host": "x", "args": []}"#,
    );
    write(t.path(), &format!("{run}/files/output.log"), "hello\n");
    write(
        t.path(),
        &format!("{run}/run-abc123.wandb"),
        b":W&B\xe1\xbe\x00",
    );
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        t.path().join(run),
        t.path().join("sweep/seed5/wandb/latest-run"),
    )
    .unwrap();
    let r = one(&t.path().join("sweep"));
    assert_eq!(r.name, "abc123");
    assert_eq!(
        r.seed.as_deref(),
        Some("5"),
        "from the directory above wandb/"
    );
    assert_eq!(r.config["lr"], json!(0.001));
    assert_eq!(r.config["optimizer.name"], json!("adam"));
    assert_eq!(r.config["method"], json!("baseline"));
    assert!(!r
        .config
        .keys()
        .any(|k| k.starts_with("_wandb") || k == "wandb_version"));
    assert_eq!(r.metrics["val/acc"], 0.82);
    assert!(r.metrics["loss"].is_nan());
    assert_eq!(r.metrics.len(), 2, "{:?}", r.metrics);
}

#[test]
fn wandb_legacy_history_file() {
    let t = tempfile::tempdir().unwrap();
    let run = t.path().join("offline-run-20200101_000000-old1");
    write(
        &run,
        "files/wandb-history.jsonl",
        "{\"_step\": 0, \"acc\": 0.1}\n{\"_step\": 1, \"acc\": 0.3}\n",
    );
    write(
        &run,
        "files/config.yaml",
        "seed:\n  desc: null\n  value: 11\n",
    );
    let r = one(&run);
    assert_eq!(r.name, "old1");
    assert_eq!(r.seed.as_deref(), Some("11"));
    assert_eq!(r.history["acc"], [(0.0, 0.1), (1.0, 0.3)]);
    assert_eq!(r.metrics["acc"], 0.3);
}

/// An MLflow file store as MLflow 2.x writes it.
fn make_mlflow_file_store(root: &Path) -> PathBuf {
    let store = root.join("mlruns");
    write(&store, "0/meta.yaml", "artifact_location: file:///x/mlruns/0\nexperiment_id: '0'\nlifecycle_stage: active\nname: Default\n");
    write(&store, "0/tags/mlflow.note.content", "experiment notes");
    let run = |id: &str, name: &str, seed: &str, stage: &str, points: &str| {
        let dir = format!("0/{id}");
        write(&store, &format!("{dir}/meta.yaml"), format!(
            "artifact_uri: file:///x/mlruns/0/{id}/artifacts\nend_time: 1700000100000\nentry_point_name: ''\nexperiment_id: '0'\nlifecycle_stage: {stage}\nrun_id: {id}\nrun_name: {name}\nrun_uuid: {id}\nsource_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: 1700000000000\nstatus: 3\ntags: []\nuser_id: me\n"));
        write(&store, &format!("{dir}/metrics/val/acc"), points);
        write(
            &store,
            &format!("{dir}/metrics/loss"),
            "1700000000000 1.5\n1700000001000 nan 1\n",
        );
        write(&store, &format!("{dir}/params/seed"), seed);
        write(&store, &format!("{dir}/params/lr"), "0.001");
        write(&store, &format!("{dir}/tags/mlflow.runName"), name);
        write(&store, &format!("{dir}/tags/mlflow.user"), "me");
        write(&store, &format!("{dir}/tags/method"), "baseline\n");
        write(&store, &format!("{dir}/artifacts/model/config.json"), "{}");
    };
    run(
        "aaa111",
        "bright-owl-1",
        "0",
        "active",
        "1700000000000 0.5 0\n1700000002000 0.75 10\n1700000001000 0.7 10\n",
    );
    run(
        "bbb222",
        "calm-fox-2",
        "1",
        "active",
        "1700000000000 0.6 0\n1700000003000 0.8 10\n",
    );
    run(
        "ccc333",
        "deleted-3",
        "2",
        "deleted",
        "1700000000000 0.1 0\n",
    );
    write(&store, ".trash/ddd444/meta.yaml", "run_id: ddd444\n");
    write(&store, "models/m/meta.yaml", "name: m\n");
    store
}

#[test]
fn mlflow_file_store_runs() {
    let t = tempfile::tempdir().unwrap();
    let store = make_mlflow_file_store(t.path());
    let runs = read(&[&store]);
    assert_eq!(
        runs.len(),
        2,
        "deleted and trashed runs are left out: {runs:#?}"
    );
    let r = &runs[0];
    assert_eq!(r.name, "bright-owl-1");
    assert_eq!(r.seed.as_deref(), Some("0"));
    assert_eq!(r.config["lr"], json!("0.001"));
    assert_eq!(r.config["tags.method"], json!("baseline"));
    assert!(!r.config.keys().any(|k| k.contains("mlflow.")));
    // Latest = max by (step, timestamp): the point at step 10 logged last.
    assert_eq!(r.metrics["val/acc"], 0.75);
    assert_eq!(
        r.history["val/acc"],
        [(0.0, 0.5), (10.0, 0.7), (10.0, 0.75)]
    );
    assert!(r.metrics["loss"].is_nan(), "Python's `nan` repr is read");
    assert_eq!(
        r.history["loss"][0],
        (0.0, 1.5),
        "a legacy two-field line is step 0"
    );
    assert_eq!(r.source, store.join("0/aaa111"));
    assert_eq!(runs[1].metrics["val/acc"], 0.8);
    // A run directory named directly.
    assert_eq!(one(&store.join("0/bbb222")).name, "calm-fox-2");
}

#[test]
fn mlflow_sqlite_store() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("mlflow.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(MLFLOW_SCHEMA).unwrap();
    conn.execute_batch(
        "INSERT INTO experiments VALUES (0, 'Default', 'mlflow-artifacts:/0', 'active', 0, 0);
         INSERT INTO runs (run_uuid, name, status, start_time, lifecycle_stage, experiment_id)
           VALUES ('r1', 'bold-cat-1', 'FINISHED', 1, 'active', 0),
                  ('r2', '', 'FINISHED', 2, 'active', 0),
                  ('r3', 'gone', 'FINISHED', 3, 'deleted', 0);
         INSERT INTO params VALUES ('seed', '4', 'r1'), ('lr', '0.01', 'r1'), ('random_seed', '5', 'r2');
         INSERT INTO tags VALUES ('mlflow.runName', 'bold-cat-1', 'r1'), ('mlflow.runName', 'quiet-dog-2', 'r2'),
                                 ('arm', 'B', 'r2'), ('mlflow.user', 'me', 'r2');
         INSERT INTO metrics VALUES ('val/acc', 0.5, 100, 'r1', 0, 0), ('val/acc', 0.9, 300, 'r1', 5, 0),
                                    ('val/acc', 0.8, 200, 'r1', 5, 0), ('loss', 0, 100, 'r1', 5, 1),
                                    ('val/acc', 0.6, 100, 'r2', 5, 0), ('val/acc', 0.3, 100, 'r3', 5, 0);
         INSERT INTO latest_metrics VALUES ('val/acc', 0.9, 300, 5, 0, 'r1');",
    )
    .unwrap();
    drop(conn);
    let runs = read(&[&db]);
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].name, "bold-cat-1");
    assert_eq!(runs[0].place, "run r1");
    assert_eq!(runs[0].seed.as_deref(), Some("4"));
    assert_eq!(runs[0].metrics["val/acc"], 0.9);
    assert_eq!(
        runs[0].history["val/acc"],
        [(0.0, 0.5), (5.0, 0.8), (5.0, 0.9)]
    );
    assert!(runs[0].metrics["loss"].is_nan(), "is_nan marks NaN");
    assert_eq!(runs[1].name, "quiet-dog-2");
    assert_eq!(runs[1].seed.as_deref(), Some("5"));
    assert_eq!(runs[1].config["tags.arm"], json!("B"));
    // Found by walking too.
    assert_eq!(read(&[t.path()]).len(), 2);
}

#[test]
fn tensorboard_event_files_in_each_scalar_encoding() {
    let t = tempfile::tempdir().unwrap();
    for (dir, enc) in [
        ("simple_seed1", Encoding::Simple),
        ("tf2_seed2", Encoding::TensorFloatVal),
        ("double_seed3", Encoding::TensorDoubleContent),
    ] {
        write(
            t.path(),
            &format!("logs/{dir}/events.out.tfevents.1700000000.host.1.0"),
            event_file(
                &[
                    (1.0, 0, "loss", 2.0),
                    (2.0, 10, "loss", 1.5),
                    (2.0, 10, "val/acc", 0.25),
                ],
                enc,
            ),
        );
    }
    let runs = read(&[&t.path().join("logs")]);
    assert_eq!(runs.len(), 3);
    for (r, seed, name) in [
        (&runs[0], "3", "double_seed3"),
        (&runs[1], "1", "simple_seed1"),
        (&runs[2], "2", "tf2_seed2"),
    ] {
        assert_eq!(r.name, name);
        assert_eq!(r.seed.as_deref(), Some(seed));
        assert_eq!(r.history["loss"], [(0.0, 2.0), (10.0, 1.5)]);
        assert_eq!(r.metrics["val/acc"], 0.25);
    }
}

#[test]
fn tensorboard_restarts_merge_and_the_latest_write_wins() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run");
    write(
        &dir,
        "events.out.tfevents.100.host",
        event_file(
            &[
                (100.0, 0, "loss", 3.0),
                (101.0, 1, "loss", 2.0),
                (102.0, 2, "loss", 9.0),
                (103.0, 3, "loss", 8.0),
                (104.0, 4, "loss", 7.0),
            ],
            Encoding::Simple,
        ),
    );
    // Preempted after step 4, restarted from the step-2 checkpoint: steps 2 and 3 are logged
    // again, later, and the first timeline's steps from 2 on (4 included) are gone.
    write(
        &dir,
        "events.out.tfevents.200.host",
        event_file(
            &[(200.0, 2, "loss", 1.0), (201.0, 3, "loss", 0.5)],
            Encoding::Simple,
        ),
    );
    let r = one(&dir);
    assert_eq!(
        r.history["loss"],
        [(0.0, 3.0), (1.0, 2.0), (2.0, 1.0), (3.0, 0.5)]
    );
    assert_eq!(r.source, dir);
}

#[test]
fn tensorboard_writers_side_by_side_keep_all_their_points() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run");
    let train: Vec<_> = (0..4)
        .map(|s| (1.0 + s as f64, s, "train/loss", 1.0 / (s + 1) as f64))
        .collect();
    let val: Vec<_> = (0..4)
        .map(|s| (1.5 + s as f64, s, "val/loss", 2.0 / (s + 1) as f64))
        .collect();
    write(
        &dir,
        "events.out.tfevents.1.host.1.0",
        event_file(&train, Encoding::Simple),
    );
    write(
        &dir,
        "events.out.tfevents.1.host.1.1",
        event_file(&val, Encoding::Simple),
    );
    let r = one(&dir);
    assert_eq!(r.history["train/loss"].len(), 4);
    assert_eq!(r.history["val/loss"].len(), 4);
}

#[test]
fn keras_train_and_validation_subdirectories_are_one_run() {
    let t = tempfile::tempdir().unwrap();
    let run = t.path().join("fit_seed_8");
    write(
        &run,
        "train/events.out.tfevents.1.host.v2",
        event_file(&[(1.0, 0, "epoch_loss", 0.9)], Encoding::TensorFloatVal),
    );
    write(
        &run,
        "validation/events.out.tfevents.1.host.v2",
        event_file(&[(1.0, 0, "epoch_loss", 1.25)], Encoding::TensorFloatVal),
    );
    let runs = read(&[t.path()]);
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(runs[0].name, "fit_seed_8");
    assert_eq!(runs[0].seed.as_deref(), Some("8"));
    assert_eq!(runs[0].metrics["train/epoch_loss"], 0.8999999761581421);
    assert_eq!(runs[0].metrics["validation/epoch_loss"], 1.25);
}

/// A file written by tensorboardX 2.6.5 (its own TFRecord writer and CRC code), committed as
/// `tests/fixtures/sweep/tensorboardx/` (5.7 KB). It was produced in a throwaway virtualenv
/// (`pip install tensorboardX`) by this script:
///
/// ```python
/// w = SummaryWriter(logdir="out", filename_suffix=".fixture"); fw = w._get_file_writer()
/// for i, v in enumerate([2.0, 1.5, 1.25, 1.125]):
///     step = i * 10
///     w.add_scalar("train/loss", v, global_step=step, walltime=1700000000 + i)   # simple_value
///     acc = TensorProto(dtype=1, tensor_shape=TensorShapeProto(), float_val=[0.5 + i / 8])
///     lr = TensorProto(dtype=2, tensor_shape=TensorShapeProto(),
///                      tensor_content=struct.pack("<d", 1e-3 / (i + 1)))
///     fw.add_summary(Summary(value=[Summary.Value(tag="val/acc", tensor=acc),
///                                   Summary.Value(tag="lr", tensor=lr)]), step, walltime=1700000000 + i)
/// w.add_histogram("weights", np.arange(10, dtype=np.float32), global_step=0, walltime=1700000000)
/// w.add_text("note", "hello", global_step=0, walltime=1700000000)
/// w.close()
/// ```
///
/// The expected values are the ones the script logged; the histogram and the text summary
/// must be passed over, and every record's CRCs must check out.
#[test]
fn a_file_written_by_tensorboardx() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sweep/tensorboardx");
    let r = one(&dir);
    assert_eq!(
        r.history["train/loss"],
        [(0.0, 2.0), (10.0, 1.5), (20.0, 1.25), (30.0, 1.125)]
    );
    assert_eq!(
        r.history["val/acc"],
        [(0.0, 0.5), (10.0, 0.625), (20.0, 0.75), (30.0, 0.875)]
    );
    let lr: Vec<f64> = r.history["lr"].iter().map(|p| p.1).collect();
    assert_eq!(lr, [1e-3, 1e-3 / 2.0, 1e-3 / 3.0, 1e-3 / 4.0]);
    assert_eq!(
        r.metrics.keys().collect::<Vec<_>>(),
        ["lr", "train/loss", "val/acc"]
    );
    // The file is named directly too (and our test encoder agrees with tensorboardX's framing:
    // the first record, the file version, is byte-identical).
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert_eq!(one(&file).metrics["train/loss"], 1.125);
    let bytes = std::fs::read(&file).unwrap();
    let ours = tfrecord(&file_version_event(f64::from_le_bytes(
        bytes[13..21].try_into().unwrap(),
    )));
    assert_eq!(bytes[..ours.len()], ours[..]);
}

#[test]
fn globs_and_a_mixed_directory() {
    let t = tempfile::tempdir().unwrap();
    for s in 0..3 {
        write(
            t.path(),
            &format!("runs/a_s{s}.json"),
            json!({"group": "A", "metrics": {"m": s}}).to_string(),
        );
        write(
            t.path(),
            &format!("runs/b_s{s}.json"),
            json!({"group": "B", "metrics": {"m": s + 1}}).to_string(),
        );
    }
    write(t.path(), "runs/notes.txt", "not a run");
    write(t.path(), "runs/.hidden/x.json", "{broken");
    let pattern = t.path().join("runs/a_*.json");
    let runs = read(&[&pattern]);
    assert_eq!(runs.len(), 3);
    assert!(runs.iter().all(|r| r.group.as_deref() == Some("A")));
    assert_eq!(
        runs.iter()
            .map(|r| r.seed.clone().unwrap())
            .collect::<Vec<_>>(),
        ["0", "1", "2"]
    );
    let all = read(&[&t.path().join("runs")]);
    assert_eq!(
        all.len(),
        6,
        "hidden directories and other files are not read"
    );
    assert_eq!(all[0].name, "a_s0");
}

#[test]
fn files_named_without_a_known_extension_are_sniffed() {
    let t = tempfile::tempdir().unwrap();
    let tb = write(
        t.path(),
        "tb.bin",
        event_file(&[(1.0, 5, "x", 0.5)], Encoding::Simple),
    );
    assert_eq!(one(&tb).metrics["x"], 0.5);
    let js = write(t.path(), "run.out", r#"{"metrics": {"x": 1}}"#);
    assert_eq!(one(&js).metrics["x"], 1.0);
    let jl = write(
        t.path(),
        "log.txt",
        "{\"step\": 1, \"x\": 2}\n{\"step\": 2, \"x\": 3}\n",
    );
    assert_eq!(one(&jl).metrics["x"], 3.0);
}

#[test]
fn thousands_of_files_keep_their_order() {
    let t = tempfile::tempdir().unwrap();
    for i in 0..300 {
        write(
            t.path(),
            &format!("r{i:04}.json"),
            json!({"seed": i % 5, "metrics": {"m": i}}).to_string(),
        );
    }
    let runs = read(&[t.path()]);
    assert_eq!(runs.len(), 300);
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r.metrics["m"], i as f64);
        assert_eq!(r.name, format!("r{i:04}"));
    }
}

/// An offline W&B run, as wandb 0.31.0 wrote it (`pip install wandb` in a throwaway
/// virtualenv; `tests/fixtures/sweep/wandb-offline/`, 3.1 KB; its `logs/`, `tmp/` and
/// `files/requirements.txt` removed). An offline run has no `wandb-summary.json`: everything is
/// in the binary `run-<id>.wandb`. Written by:
///
/// ```python
/// run = wandb.init(mode="offline", project="p", group="adamw", name="bright-sun-1",
///                  config={"seed": 3, "lr": 1e-3, "optimizer": {"name": "adamw", "betas": [0.9, 0.999]}})
/// for step in range(4):
///     run.log({"loss": 2.0 / (step + 1), "val/acc": 0.5 + step / 8, "phase": "train"}, step=step * 10)
/// run.log({"loss": float("nan")}, step=40)
/// run.summary["best_acc"] = 0.875
/// run.finish()
/// ```
#[test]
fn an_offline_run_written_by_wandb() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sweep/wandb-offline");
    let r = one(&dir);
    assert_eq!(r.name, "bright-sun-1");
    assert_eq!(r.group.as_deref(), Some("adamw"));
    assert_eq!(r.seed.as_deref(), Some("3"));
    assert_eq!(r.config["lr"], json!(0.001));
    assert_eq!(r.config["optimizer.name"], json!("adamw"));
    assert!(!r.config.keys().any(|k| k.starts_with('_')));
    assert_eq!(
        r.history["val/acc"],
        [(0.0, 0.5), (10.0, 0.625), (20.0, 0.75), (30.0, 0.875)]
    );
    let loss = &r.history["loss"];
    assert_eq!(
        loss[..4],
        [(0.0, 2.0), (10.0, 1.0), (20.0, 2.0 / 3.0), (30.0, 0.5)]
    );
    assert!(loss[4].0 == 40.0 && loss[4].1.is_nan());
    assert!(r.metrics["loss"].is_nan());
    assert_eq!(r.metrics["best_acc"], 0.875);
    assert!(!r.history.contains_key("phase") && !r.metrics.contains_key("_step"));
    // The log file named directly.
    let log = std::fs::read_dir(dir.join("offline-run-20261121_061247-f6n2mr1x"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "wandb"))
        .unwrap();
    assert_eq!(one(&log).name, "bright-sun-1");
}

#[test]
fn wandb_log_records_split_across_blocks() {
    let t = tempfile::tempdir().unwrap();
    let mut records = vec![wandb_run_record(
        "xyz",
        "big-run",
        "B",
        &[
            ("seed", "9"),
            ("notes", &format!("\"{}\"", "n".repeat(70_000))),
        ],
    )];
    for step in 0..2000u64 {
        records.push(wandb_history_record(
            step,
            &[
                ("_step", &step.to_string()),
                ("loss", &format!("{}", 1.0 / (step + 1) as f64)),
            ],
        ));
    }
    let dir = t.path().join("wandb/run-20240101_000000-xyz");
    write(&dir, "run-xyz.wandb", wandb_log(&records));
    let r = one(t.path());
    assert_eq!(
        (r.name.as_str(), r.group.as_deref(), r.seed.as_deref()),
        ("big-run", Some("B"), Some("9"))
    );
    assert_eq!(
        r.config["notes"].as_str().unwrap().len(),
        70_000,
        "a record over two blocks"
    );
    assert_eq!(r.history["loss"].len(), 2000);
    assert_eq!(r.metrics["loss"], 1.0 / 2000.0);
}

/// A run logged by tensorboardX 2.6.5 with `add_hparams`, which writes the hyperparameters
/// (and the metric values given to it) into a sub-directory of the run
/// (`tests/fixtures/sweep/tensorboardx-hparams/`, 0.6 KB). Written by:
///
/// ```python
/// w = SummaryWriter(logdir="runs/lr0.1_seed2", filename_suffix=".fixture")
/// for i, v in enumerate([1.0, 0.5]):
///     w.add_scalar("loss", v, global_step=i, walltime=1700000000 + i)
/// w.add_hparams({"lr": 0.1, "seed": 2, "optimizer": "sgd", "nesterov": True},
///               {"hparam/final_loss": 0.5}, name="hp", global_step=1)
/// ```
#[test]
fn tensorboard_hparams_become_the_config_of_one_run() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sweep/tensorboardx-hparams");
    let r = one(&dir);
    assert_eq!(r.name, "lr0.1_seed2");
    assert_eq!(r.config["lr"], json!(0.1));
    assert_eq!(r.config["seed"], json!(2));
    assert_eq!(r.config["optimizer"], json!("sgd"));
    assert_eq!(r.config["nesterov"], json!(true));
    assert_eq!(r.seed.as_deref(), Some("2"));
    assert_eq!(r.history["loss"], [(0.0, 1.0), (1.0, 0.5)]);
    assert_eq!(r.metrics["hparam/final_loss"], 0.5);
}

#[test]
fn hf_output_directory_with_its_tensorboard_copy_is_one_run() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("bert_seed_1");
    write(
        &out,
        "trainer_state.json",
        json!({"log_history": [{"step": 10, "loss": 0.7}]}).to_string(),
    );
    write(
        &out,
        "runs/Nov21_06-00-00_host/events.out.tfevents.1.host.1.0",
        event_file(&[(1.0, 10, "train/loss", 0.7)], Encoding::Simple),
    );
    let runs = read(&[t.path()]);
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert!(runs[0].source.ends_with("trainer_state.json"));
}

#[test]
fn lightning_tensorboard_logger_with_hparams_yaml() {
    let t = tempfile::tempdir().unwrap();
    let v = t.path().join("tb_logs/my_model/version_1");
    write(
        &v,
        "events.out.tfevents.1.host.1.0",
        event_file(&[(1.0, 5, "val_loss", 0.25)], Encoding::Simple),
    );
    write(&v, "hparams.yaml", "lr: 0.01\nseed: 12\n");
    let r = one(&v);
    assert_eq!(r.name, "my_model/version_1");
    assert_eq!(r.config["lr"], json!(0.01));
    assert_eq!(r.seed.as_deref(), Some("12"));
    assert_eq!(r.metrics["val_loss"], 0.25);
}

#[test]
fn wandb_pandas_history_fill_is_not_taken_for_divergence() {
    let t = tempfile::tempdir().unwrap();
    // `run.history()` rows: keys logged at other steps are NaN; the run did not diverge (its
    // summary is finite), so those NaNs are fill. A key whose summary is NaN keeps its NaNs.
    let p = write(
        t.path(),
        "dump.json",
        r#"{"id": "r1", "summary": {"loss": 0.4, "val/acc": 0.7, "grad": NaN},
            "history": [{"_step": 0, "loss": 0.9, "val/acc": NaN, "grad": 1.0},
                        {"_step": 5, "loss": 0.4, "val/acc": 0.7, "grad": NaN},
                        {"_step": 6, "loss": NaN, "val/acc": NaN, "grad": NaN}]}"#,
    );
    let r = one(&p);
    assert_eq!(r.history["loss"], [(0.0, 0.9), (5.0, 0.4)]);
    assert_eq!(r.history["val/acc"], [(5.0, 0.7)]);
    assert_eq!(r.history["grad"].len(), 3);
    assert!(r.history["grad"][2].1.is_nan());
}

#[test]
fn a_run_named_twice_is_read_once() {
    let t = tempfile::tempdir().unwrap();
    let a = write(t.path(), "runs/a.json", r#"{"metrics": {"m": 1}}"#);
    write(t.path(), "runs/b.json", r#"{"metrics": {"m": 2}}"#);
    let runs = read(&[&t.path().join("runs"), &a, &t.path().join("runs/*.json")]);
    assert_eq!(runs.len(), 2, "{runs:#?}");
}

#[test]
fn wandb_ui_csv_exports() {
    let t = tempfile::tempdir().unwrap();
    let table = write(
        t.path(),
        "wandb_export_2024-01-01.csv",
        "\"Name\",\"State\",\"Notes\",\"User\",\"Tags\",\"Created\",\"Runtime\",\"Sweep\",\"lr\",\"seed\",\"method\",\"accuracy\",\"_step\"\n\
         \"bold-1\",\"finished\",\"a note, with a comma\",\"me\",\"\",\"2024-01-01T00:00:00.000Z\",\"61\",\"\",\"0.001\",\"0\",\"new\",\"0.91\",\"99\"\n\
         \"calm-2\",\"crashed\",\"-\",\"me\",\"\",\"2024-01-01T00:00:00.000Z\",\"12\",\"\",\"0.001\",\"1\",\"old\",\"NaN\",\"7\"\n",
    );
    let runs = read(&[&table]);
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].name, "bold-1");
    assert_eq!(runs[0].place, "line 2");
    assert_eq!(runs[0].seed.as_deref(), Some("0"));
    assert_eq!(runs[0].config["method"], json!("new"));
    assert_eq!(runs[0].config["State"], json!("finished"));
    assert_eq!(runs[0].metrics["accuracy"], 0.91);
    assert!(!runs[0].metrics.contains_key("_step") && !runs[0].config.contains_key("Notes"));
    assert!(runs[1].metrics["accuracy"].is_nan());

    let panel = write(
        t.path(),
        "panel.csv",
        "\"Step\",\"adam-s1 - val/acc\",\"adam-s1 - val/acc__MIN\",\"adam-s1 - val/acc__MAX\",\"sgd-s1 - val/acc\"\n\
         0,0.5,0.5,0.5,0.4\n10,0.7,0.69,0.71,\n20,,,,0.6\n",
    );
    let runs = read(&[&panel]);
    assert_eq!(runs.len(), 2);
    assert_eq!(
        (runs[0].name.as_str(), runs[0].seed.as_deref()),
        ("adam-s1", Some("1"))
    );
    assert_eq!(runs[0].history["val/acc"], [(0.0, 0.5), (10.0, 0.7)]);
    assert_eq!(runs[1].history["val/acc"], [(0.0, 0.4), (20.0, 0.6)]);
    assert_eq!(runs[1].place, "run sgd-s1");
}

#[test]
fn a_file_of_many_runs_does_not_give_them_all_its_seed() {
    let t = tempfile::tempdir().unwrap();
    let p = write(
        t.path(),
        "sweep_seed7.json",
        json!([{"name": "x", "metrics": {"m": 1}}, {"name": "y-s2", "metrics": {"m": 2}}])
            .to_string(),
    );
    let runs = read(&[&p]);
    assert_eq!(runs[0].seed, None);
    assert_eq!(runs[1].seed.as_deref(), Some("2"));
    let p = write(
        t.path(),
        "seed7.json",
        json!({"name": "x", "metrics": {"m": 1}}).to_string(),
    );
    assert_eq!(one(&p).seed.as_deref(), Some("7"));
}

#[test]
fn a_message_log_in_jsonl_is_passed_over_when_walking() {
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        "train.log.jsonl",
        "{\"level\": \"info\", \"msg\": \"started\"}\n",
    );
    write(t.path(), "run_s1.jsonl", "{\"step\": 1, \"loss\": 0.5}\n");
    let out = read_paths_detailed(&[t.path().to_path_buf()]).unwrap();
    assert_eq!(out.runs.len(), 1);
    assert_eq!(out.skipped.len(), 1);
    assert!(
        out.skipped[0].reason.contains("hold no numbers"),
        "{:?}",
        out.skipped
    );
}
