//! Malformed run files: each must give an error that names the file and the place, with exit
//! code 2, never a half-read run.

use mldebug_sweep::readers::read_paths;
use mldebug_sweep_writers::*;
use std::path::Path;

/// The error message for reading `path`, checked to be an input error (exit 2).
fn error_for(path: &Path) -> String {
    match read_paths(&[path.to_path_buf()]) {
        Ok(runs) => panic!("expected an error for {}, read {runs:#?}", path.display()),
        Err(e) => {
            assert!(
                matches!(
                    e,
                    mldebug_sweep::Error::Input { .. } | mldebug_sweep::Error::Usage(_)
                ),
                "{e}"
            );
            e.to_string()
        }
    }
}

fn assert_starts(msg: &str, prefix: impl AsRef<str>) {
    assert!(
        msg.starts_with(prefix.as_ref()),
        "message:\n  {msg}\nexpected to start with:\n  {}",
        prefix.as_ref()
    );
}

fn three_record_file() -> (Vec<u8>, Vec<usize>) {
    let records = [
        tfrecord(&file_version_event(1.0)),
        tfrecord(&scalar_event(1.0, 0, "loss", 2.0, Encoding::Simple)),
        tfrecord(&scalar_event(2.0, 1, "loss", 1.0, Encoding::Simple)),
    ];
    let mut offsets = Vec::new();
    let mut bytes = Vec::new();
    for r in records {
        offsets.push(bytes.len());
        bytes.extend(r);
    }
    (bytes, offsets)
}

#[test]
fn truncated_tfevents_record_names_the_byte_offset() {
    let t = tempfile::tempdir().unwrap();
    let (bytes, offsets) = three_record_file();
    // Cut inside the last record's data.
    let p = write(
        t.path(),
        "run/events.out.tfevents.1.h",
        &bytes[..bytes.len() - 5],
    );
    let msg = error_for(&p);
    assert_starts(
        &msg,
        format!(
            "{}: record 3 at byte {}: truncated record",
            p.display(),
            offsets[2]
        ),
    );
    assert!(msg.contains("only"), "{msg}");
    // Cut inside the last record's header; the directory is named, the file is still named.
    let p = write(
        t.path(),
        "run/events.out.tfevents.1.h",
        &bytes[..offsets[2] + 6],
    );
    let msg = error_for(&t.path().join("run"));
    assert_starts(
        &msg,
        format!(
            "{}: record 3 at byte {}: truncated record: 6 bytes left",
            p.display(),
            offsets[2]
        ),
    );
}

#[test]
fn bad_crcs_name_the_record_and_offset() {
    let t = tempfile::tempdir().unwrap();
    let (bytes, offsets) = three_record_file();
    let mut data_flip = bytes.clone();
    data_flip[offsets[1] + 12 + 3] ^= 0x40;
    let p = write(t.path(), "events.out.tfevents.2.h", &data_flip);
    assert_starts(
        &error_for(&p),
        format!(
            "{}: record 2 at byte {}: bad CRC of the record data",
            p.display(),
            offsets[1]
        ),
    );

    let mut len_flip = bytes;
    len_flip[offsets[2]] ^= 0x01;
    let p = write(t.path(), "events.out.tfevents.3.h", &len_flip);
    assert_starts(
        &error_for(&p),
        format!(
            "{}: record 3 at byte {}: bad CRC of the record length",
            p.display(),
            offsets[2]
        ),
    );
}

#[test]
fn a_record_with_a_good_crc_but_a_broken_event_names_the_record() {
    let t = tempfile::tempdir().unwrap();
    let mut bytes = tfrecord(&file_version_event(1.0));
    let at = bytes.len();
    bytes.extend(tfrecord(&[0x2a, 0x10, 0x01])); // field 5, 16 bytes announced, 1 present
    let p = write(t.path(), "events.out.tfevents.4.h", &bytes);
    assert_starts(
        &error_for(&p),
        format!(
            "{}: record 2 at byte {at}: malformed Event protobuf",
            p.display()
        ),
    );
}

#[test]
fn json_syntax_error_names_line_and_column() {
    let t = tempfile::tempdir().unwrap();
    let p = write(
        t.path(),
        "run.json",
        "{\n  \"metrics\": {\n    \"loss\": 0.5,\n  }\n}\n",
    );
    let msg = error_for(&p);
    assert_starts(
        &msg,
        format!(
            "{}: line 4, column 3: JSON syntax error: trailing comma",
            p.display()
        ),
    );

    let p = write(t.path(), "cut.json", "{\"metrics\": {\"loss\": 0.5");
    let msg = error_for(&p);
    assert_starts(
        &msg,
        format!(
            "{}: line 1, column 24: JSON ends early: EOF while parsing",
            p.display()
        ),
    );
    assert!(msg.contains("truncated"), "{msg}");

    let p = write(
        t.path(),
        "log.jsonl",
        "{\"step\": 1, \"loss\": 0.5}\n{\"step\": 2, \"loss\": 0.4\n",
    );
    assert_starts(
        &error_for(&p),
        format!("{}: line 2, column 23: JSON ends early", p.display()),
    );
}

#[test]
fn non_numeric_values_name_the_key_and_line() {
    let t = tempfile::tempdir().unwrap();
    let p = write(
        t.path(),
        "run.json",
        "{\n  \"seed\": 1,\n  \"metrics\": {\"acc\": 0.9,\n    \"val_loss\": \"low\"}\n}\n",
    );
    let msg = error_for(&p);
    assert_starts(&msg, format!("{}: line 4, column", p.display()));
    assert!(
        msg.ends_with("metric \"val_loss\" is not a number: found the string \"low\""),
        "{msg}"
    );

    let p = write(
        t.path(),
        "hist.json",
        "{\"history\": {\"loss\": [[0, 1.0],\n [1, true]]}}",
    );
    let msg = error_for(&p);
    assert_starts(&msg, format!("{}: line 2, column", p.display()));
    assert!(
        msg.contains("history \"loss\" point 2 is not a number: found true"),
        "{msg}"
    );

    let p = write(
        t.path(),
        "rows.jsonl",
        "{\"step\": 1, \"loss\": 0.5}\n{\"step\": 2, \"loss\": \"diverged\"}\n",
    );
    assert_eq!(
        error_for(&p),
        format!("{}: line 2: non-numeric value \"diverged\" for key \"loss\", which holds numbers in other rows", p.display())
    );

    let p = write(
        t.path(),
        "long.jsonl",
        "{\"run\": \"a\", \"metric\": \"acc\", \"value\": [1]}\n",
    );
    assert_eq!(
        error_for(&p),
        format!(
            "{}: line 1: value of metric \"acc\" is not a number: [1]",
            p.display()
        )
    );

    let state =
        serde_json::json!({"log_history": [{"step": 1, "loss": 0.5}, {"step": 2, "loss": "nan?"}]});
    let p = write(t.path(), "trainer_state.json", state.to_string());
    let msg = error_for(&p);
    assert_starts(&msg, format!("{}: line 1, column", p.display()));
    assert!(
        msg.ends_with(
            "row 2: non-numeric value \"nan?\" for key \"loss\", which holds numbers in other rows"
        ),
        "{msg}"
    );

    let p = write(
        t.path(),
        "v0/metrics.csv",
        "epoch,step,val_loss\n0,10,0.5\n1,20,oops\n",
    );
    assert_eq!(
        error_for(&p),
        format!("{}: line 3: non-numeric value \"oops\" for key \"val_loss\", which holds numbers in other rows", p.display())
    );
}

#[test]
fn non_numeric_mlflow_values_name_the_file_and_line() {
    let t = tempfile::tempdir().unwrap();
    let run = t.path().join("mlruns/0/abc");
    write(
        &run,
        "meta.yaml",
        "run_id: abc\nrun_name: r\nlifecycle_stage: active\nstatus: 3\n",
    );
    let m = write(
        &run,
        "metrics/val/acc",
        "1700000000000 0.5 0\n1700000000001 n/a 1\n",
    );
    assert_eq!(
        error_for(&t.path().join("mlruns")),
        format!(
            "{}: line 2: value of metric \"val/acc\" is not a number: \"n/a\"",
            m.display()
        )
    );

    let db = t.path().join("mlflow.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(MLFLOW_SCHEMA).unwrap();
    conn.execute_batch(
        "INSERT INTO runs (run_uuid, name, lifecycle_stage) VALUES ('r1', 'x', 'active');
         INSERT INTO metrics VALUES ('loss', 'high', 5, 'r1', 3, 0);",
    )
    .unwrap();
    drop(conn);
    assert_eq!(
        error_for(&db),
        format!(
            "{}: table metrics, run r1, metric \"loss\", step 3: value is not a number: \"high\"",
            db.display()
        )
    );
}

#[test]
fn broken_yaml_side_files_name_the_line() {
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        "v0/metrics.csv",
        "epoch,step,val_loss\n0,10,0.5\n",
    );
    let h = write(
        t.path(),
        "v0/hparams.yaml",
        "lr: 0.1\nmodel: [unclosed\nseed: 1\n",
    );
    let msg = error_for(&t.path().join("v0"));
    assert_starts(&msg, format!("{}: line 3, column", h.display()));
    assert!(msg.contains("YAML syntax error"), "{msg}");
}

#[test]
fn unknown_files_list_what_was_tried() {
    let t = tempfile::tempdir().unwrap();
    let p = write(t.path(), "notes.txt", "hello, these are notes\n");
    let msg = error_for(&p);
    assert_starts(
        &msg,
        format!(
            "{}: format: unknown format; tried by name and content: *.json",
            p.display()
        ),
    );
    for tried in [
        "TensorBoard",
        "MLflow",
        "Lightning metrics.csv",
        "W&B run directories",
        "trainer_state.json",
    ] {
        assert!(msg.contains(tried), "{msg}");
    }

    let p = write(t.path(), "config.json", r#"{"hidden_size": 8}"#);
    assert_starts(
        &error_for(&p),
        format!(
            "{}: format: not a run file: JSON, but not a run object",
            p.display()
        ),
    );

    let p = write(t.path(), "empty.db", "SQLite format 3\0 but nothing else");
    assert_starts(&error_for(&p), format!("{}: ", p.display()));
}

#[test]
fn a_directory_without_runs_is_an_error() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "out/README.md", "# results\n");
    write(t.path(), "out/config.json", r#"{"hidden_size": 8}"#);
    let dir = t.path().join("out");
    let msg = error_for(&dir);
    assert_starts(
        &msg,
        format!("{}: directory: no runs found; looked for", dir.display()),
    );
    assert!(
        msg.contains(&format!(
            "passed over:\n  {}: JSON, but not",
            dir.join("config.json").display()
        )),
        "{msg}"
    );

    std::fs::create_dir(t.path().join("empty")).unwrap();
    assert_starts(
        &error_for(&t.path().join("empty")),
        format!(
            "{}: directory: no runs found",
            t.path().join("empty").display()
        ),
    );

    // One good directory does not excuse an empty one.
    write(t.path(), "good/r.json", r#"{"metrics": {"m": 1}}"#);
    let e = read_paths(&[t.path().join("good"), t.path().join("empty")]).unwrap_err();
    assert!(
        e.to_string().contains("empty: directory: no runs found"),
        "{e}"
    );
}

#[test]
fn missing_paths_and_empty_globs() {
    let t = tempfile::tempdir().unwrap();
    let missing = t.path().join("nope.json");
    assert_eq!(
        error_for(&missing),
        format!("{}: no such file or directory", missing.display())
    );
    let pattern = t.path().join("runs/*.json");
    assert_eq!(
        error_for(&pattern),
        format!("{}: no file matches this pattern", pattern.display())
    );
    let e = read_paths(&[]).unwrap_err();
    assert!(matches!(e, mldebug_sweep::Error::Usage(_)), "{e}");
}

#[test]
fn a_bad_file_among_many_is_reported_not_skipped() {
    let t = tempfile::tempdir().unwrap();
    for i in 0..100 {
        write(
            t.path(),
            &format!("r{i:03}.json"),
            format!("{{\"metrics\": {{\"m\": {i}}}}}"),
        );
    }
    let bad = write(t.path(), "r050.json", "{\"metrics\": {\"m\": }}");
    let msg = error_for(t.path());
    assert_starts(
        &msg,
        format!(
            "{}: line 1, column 19: JSON syntax error: expected value",
            bad.display()
        ),
    );
}

#[test]
fn broken_wandb_logs_name_the_byte_offset() {
    let t = tempfile::tempdir().unwrap();
    let records = [
        wandb_history_record(0, &[("loss", "1.0")]),
        wandb_history_record(1, &[("loss", "0.5")]),
    ];
    let good = wandb_log(&records);
    let second = 7 + 7 + records[0].len();
    let mut bad = good.clone();
    bad[second + 7 + 2] ^= 0x10;
    let p = write(t.path(), "run-20240101_000000-a/run-a.wandb", &bad);
    assert_starts(
        &error_for(&p),
        format!("{}: record at byte {second}: bad CRC", p.display()),
    );
    let p = write(
        t.path(),
        "run-20240101_000000-b/run-b.wandb",
        &good[..good.len() - 3],
    );
    assert_starts(
        &error_for(p.parent().unwrap()),
        format!("{}: record at byte {second}: truncated record", p.display()),
    );
    let p = write(
        t.path(),
        "run-20240101_000000-c/run-c.wandb",
        b"not a wandb log",
    );
    assert_starts(
        &error_for(&p),
        format!("{}: byte 0: not a W&B run log", p.display()),
    );
}

#[test]
fn csv_exports_with_python_reprs_are_refused_with_a_hint() {
    let t = tempfile::tempdir().unwrap();
    let p = write(
        t.path(),
        "project.csv",
        "summary,config,name\n\"{'acc': 0.9, '_step': 3}\",\"{'lr': 0.1}\",run-1\n",
    );
    let msg = error_for(&p);
    assert_starts(
        &msg,
        format!(
            "{}: line 2, column \"summary\": this cell is a Python dict repr",
            p.display()
        ),
    );
    assert!(msg.contains("json.dumps"), "{msg}");
    let p = write(t.path(), "data.csv", "x,y\n1,2\n");
    assert_starts(
        &error_for(&p),
        format!(
            "{}: format: not a run file: a CSV file, but not Lightning's metrics.csv",
            p.display()
        ),
    );
}

#[test]
fn type_errors_in_run_objects_say_what_was_expected() {
    let t = tempfile::tempdir().unwrap();
    let p = write(
        t.path(),
        "run.json",
        r#"{"config": 5, "metrics": {"a": 1}}"#,
    );
    assert_eq!(
        error_for(&p),
        format!("{}: line 1, column 12: invalid type: integer `5`, expected \"config\" to be an object of settings", p.display())
    );
    let p = write(t.path(), "list.json", "[1, 2]");
    assert_starts(
        &error_for(&p),
        format!(
            "{}: line 1, column 2: invalid type: integer `1`, expected a run object",
            p.display()
        ),
    );
}

#[test]
fn several_bad_files_report_the_first_and_count_the_rest() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "a.json", r#"{"metrics": {"m": 1}}"#);
    let b = write(t.path(), "b.json", "{");
    write(t.path(), "c.json", "{");
    write(t.path(), "d.jsonl", "{\"step\": \"x\"}\n{");
    let msg = error_for(t.path());
    assert_starts(
        &msg,
        format!("{}: line 1, column 1: JSON ends early", b.display()),
    );
    assert!(
        msg.ends_with(
            "\n(2 more inputs are malformed; fix this one and run again to see the next)"
        ),
        "{msg}"
    );
}

/// Every truncation and many single-byte corruptions of valid files: always an answer (runs or an
/// input error), never a panic. A small LCG picks the bytes, so the test is deterministic.
#[test]
fn corrupted_files_never_panic() {
    let t = tempfile::tempdir().unwrap();
    let tb = event_file(
        &[(1.0, 0, "loss", 2.0), (2.0, 1, "loss", 1.0)],
        Encoding::TensorFloatVal,
    );
    let wb = wandb_log(&[
        wandb_run_record("id", "n", "g", &[("seed", "1")]),
        wandb_history_record(0, &[("loss", "1.0")]),
    ]);
    let js =
        br#"{"seed": 1, "metrics": {"a": 1.5}, "history": {"a": [[0, 2], [1, 1.5]]}}"#.to_vec();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        (state >> 33) as usize
    };
    for (name, good) in [
        ("events.out.tfevents.1.h", &tb),
        ("run-x.wandb", &wb),
        ("run.json", &js),
    ] {
        for cut in 0..good.len() {
            let p = write(t.path(), &format!("cut/{name}"), &good[..cut]);
            let _ = read_paths(&[p]);
        }
        for _ in 0..300 {
            let mut bad = good.clone();
            let i = next() % bad.len();
            bad[i] ^= 1 << (next() % 8);
            let p = write(t.path(), &format!("flip/{name}"), &bad);
            if let Err(e) = read_paths(std::slice::from_ref(&p)) {
                assert!(e.to_string().starts_with(&p.display().to_string()), "{e}");
            }
        }
    }
}

/// YAML nested 200,000 levels deep in each YAML side file (Lightning `hparams.yaml`, W&B
/// `config.yaml`, MLflow `meta.yaml`) is refused at the 65th level with the file and place,
/// before the YAML parser (which took a minute on it) sees the file.
#[test]
fn deeply_nested_yaml_side_files_are_refused_at_once() {
    let deep = |open: &str| format!("lr: 0.1\nmodel: {}\n", open.repeat(200_000));
    for open in ["[", "{", "{a: ["] {
        let t = tempfile::tempdir().unwrap();
        write(
            t.path(),
            "v0/metrics.csv",
            "epoch,step,val_loss\n0,10,0.5\n",
        );
        let h = write(t.path(), "v0/hparams.yaml", deep(open));
        let w = t.path().join("wandb/run-20240101_000000-abc");
        write(&w, "files/wandb-summary.json", r#"{"loss": 1.0}"#);
        let c = write(&w, "files/config.yaml", deep(open));
        let m = t.path().join("mlruns/0/abc");
        let meta = write(&m, "meta.yaml", deep(open));
        write(&m, "metrics/loss", "1700000000000 0.5 0\n");
        for (dir, file) in [
            (t.path().join("v0"), h),
            (w.clone(), c),
            (t.path().join("mlruns"), meta),
        ] {
            let msg = error_for(&dir);
            assert_starts(&msg, format!("{}: line 2, column ", file.display()));
            assert!(
                msg.ends_with("YAML nested more than 64 levels deep"),
                "{msg}"
            );
        }
    }
}
