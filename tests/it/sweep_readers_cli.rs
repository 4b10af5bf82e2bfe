//! `mldebug sweep-compare` on malformed run files: exit code 2, and a message on stderr that
//! names the file and the place. Also one real comparison over mixed formats, to show the
//! readers feed the command end to end.

use mldebug_sweep_writers::*;
use std::path::Path;
use std::process::Command;

/// Runs `mldebug sweep-compare <paths>`; returns (exit code, stdout, stderr).
fn sweep_compare(paths: &[&Path], extra: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .arg("sweep-compare")
        .args(paths)
        .args(extra)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_input_error(paths: &[&Path], expected_start: &str) {
    let (code, stdout, stderr) = sweep_compare(paths, &[]);
    assert_eq!(code, 2, "stderr: {stderr}");
    assert!(stdout.is_empty(), "nothing half written: {stdout}");
    let expected = format!("error: {expected_start}");
    assert!(
        stderr.starts_with(&expected),
        "stderr:\n  {stderr}\nexpected to start with:\n  {expected}"
    );
}

/// A good pair of arms so that only the bad file can be the problem.
fn good_runs(dir: &Path) {
    for seed in 0..3 {
        for (arm, v) in [("A", 0.8), ("B", 0.7)] {
            write(
                dir,
                &format!("{arm}_s{seed}.json"),
                format!(
                    r#"{{"group": "{arm}", "seed": {seed}, "metrics": {{"acc": {}}}}}"#,
                    v + seed as f64 * 0.01
                ),
            );
        }
    }
}

#[test]
fn truncated_tfevents_record() {
    let t = tempfile::tempdir().unwrap();
    good_runs(t.path());
    let full = event_file(
        &[(1.0, 0, "acc", 0.5), (2.0, 1, "acc", 0.6)],
        Encoding::Simple,
    );
    let cut = full.len() - 6;
    let p = write(t.path(), "tb/events.out.tfevents.1.host", &full[..cut]);
    let second = tfrecord(&file_version_event(1.0)).len()
        + tfrecord(&scalar_event(1.0, 0, "acc", 0.5, Encoding::Simple)).len();
    assert_input_error(
        &[t.path()],
        &format!(
            "{}: record 3 at byte {second}: truncated record",
            p.display()
        ),
    );
}

#[test]
fn bad_crc() {
    let t = tempfile::tempdir().unwrap();
    good_runs(t.path());
    let mut bytes = event_file(&[(1.0, 0, "acc", 0.5)], Encoding::Simple);
    let n = bytes.len();
    bytes[n - 6] ^= 0xff;
    let p = write(t.path(), "tb/events.out.tfevents.1.host", &bytes);
    let at = tfrecord(&file_version_event(1.0)).len();
    assert_input_error(
        &[t.path()],
        &format!(
            "{}: record 2 at byte {at}: bad CRC of the record data",
            p.display()
        ),
    );
}

#[test]
fn json_syntax_error() {
    let t = tempfile::tempdir().unwrap();
    good_runs(t.path());
    let p = write(
        t.path(),
        "zz.json",
        "{\"group\": \"A\",\n \"metrics\": {\"acc\": 0.5,}}",
    );
    assert_input_error(
        &[t.path()],
        &format!(
            "{}: line 2, column 25: JSON syntax error: trailing comma",
            p.display()
        ),
    );
}

#[test]
fn non_numeric_value() {
    let t = tempfile::tempdir().unwrap();
    good_runs(t.path());
    let p = write(
        t.path(),
        "zz.json",
        "{\"group\": \"A\",\n \"metrics\": {\"acc\": \"high\"}}",
    );
    let (code, _, stderr) = sweep_compare(&[t.path()], &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with(&format!("error: {}: line 2, column", p.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains("metric \"acc\" is not a number: found the string \"high\""),
        "{stderr}"
    );

    let csv = write(
        t.path(),
        "lightning/version_0/metrics.csv",
        "epoch,step,acc\n0,1,0.5\n0,2,n/a\n",
    );
    assert_input_error(
        &[&csv],
        &format!(
            "{}: line 3: non-numeric value \"n/a\" for key \"acc\"",
            csv.display()
        ),
    );
}

#[test]
fn unknown_file_and_empty_directory() {
    let t = tempfile::tempdir().unwrap();
    let p = write(t.path(), "notes.txt", "just notes\n");
    assert_input_error(
        &[&p],
        &format!(
            "{}: format: unknown format; tried by name and content:",
            p.display()
        ),
    );
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert_input_error(
        &[&empty],
        &format!("{}: directory: no runs found", empty.display()),
    );
    let missing = t.path().join("missing");
    assert_input_error(
        &[&missing],
        &format!("{}: no such file or directory", missing.display()),
    );
}

#[test]
fn a_comparison_over_mixed_formats() {
    let t = tempfile::tempdir().unwrap();
    // Arm A as JSON runs in seed directories, arm B as MLflow runs with a seed param, the same
    // four seeds; the arms differ in one config key that both formats carry.
    for seed in 0..4 {
        let acc = 0.80 + seed as f64 * 0.01;
        write(
            t.path(),
            &format!("a/s{seed}/run.json"),
            format!(
                r#"{{"config": {{"method": "new"}}, "history": {{"acc": [[0, 0.1], [10, {acc}]]}}}}"#
            ),
        );
        let run = t.path().join(format!("mlruns/0/r{seed}"));
        write(
            &run,
            "meta.yaml",
            format!("run_id: r{seed}\nrun_name: old-s{seed}\nlifecycle_stage: active\n"),
        );
        write(
            &run,
            "metrics/acc",
            format!("1 0.1 0\n2 {} 10\n", acc - 0.05 - seed as f64 * 0.001),
        );
        write(&run, "params/method", "old");
        write(&run, "params/seed", seed.to_string());
    }
    let (code, stdout, stderr) = sweep_compare(
        &[&t.path().join("a"), &t.path().join("mlruns")],
        &[
            "--metric",
            "acc",
            "--group-by",
            "config.method",
            "--a",
            "new",
            "--b",
            "old",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 8, "{stdout}");
    for r in runs {
        let (arm, file) = (r["arm"].as_str().unwrap(), r["file"].as_str().unwrap());
        assert_eq!(file.contains("mlruns"), arm == "B", "{r}");
        assert!(r["seed"].is_string(), "every run has its seed: {r}");
    }
    assert_eq!(
        runs[1]["name"], "s1/run",
        "a JSON run without a name is named by its path"
    );
    assert!(
        v["tasks"][0]["paired"].is_object(),
        "seeds from paths and params pair up: {stdout}"
    );
}

/// A folder holding only W&B UI exports (any name ending in .csv, as the message promises) is
/// read; a data CSV beside them is not a run and is not read.
#[test]
fn a_folder_of_wandb_csv_exports_is_read() {
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        "wandb_export_2024-01-01.csv",
        "\"Name\",\"State\",\"seed\",\"method\",\"accuracy\"\n\
         \"a0\",\"finished\",\"0\",\"new\",\"0.91\"\n\"a1\",\"finished\",\"1\",\"new\",\"0.92\"\n\
         \"a2\",\"finished\",\"2\",\"new\",\"0.90\"\n\"b0\",\"finished\",\"0\",\"old\",\"0.85\"\n\
         \"b1\",\"finished\",\"1\",\"old\",\"0.86\"\n\"b2\",\"finished\",\"2\",\"old\",\"0.84\"\n",
    );
    // Not UTF-8, not a run: must neither be read nor stop the walk.
    write(t.path(), "dataset.csv", b"x,y\n\xff\xfe,1\n".as_slice());
    let (code, out, err) = sweep_compare(&[t.path()], &["--group-by", "method"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("VERDICT"), "{out}");
}

/// A link that loops is named as such (not "no such file"); a FIFO named on the command line,
/// alone or through a glob, is refused at once instead of blocking the read.
#[cfg(unix)]
#[test]
fn links_that_loop_and_fifos_are_refused_with_what_they_are() {
    let t = tempfile::tempdir().unwrap();
    let looped = t.path().join("self.json");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    assert_input_error(
        &[&looped],
        &format!(
            "{}: a symbolic link that cannot be followed:",
            looped.display()
        ),
    );
    let fifo = t.path().join("pipe.json");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    assert_input_error(
        &[&fifo],
        &format!("{}: not a regular file or a directory", fifo.display()),
    );
    let pattern = t.path().join("pipe*.json");
    assert_input_error(
        &[&pattern],
        &format!("{}: not a regular file or a directory", fifo.display()),
    );
    // In a walked folder, the FIFO is passed over, and the good runs beside it are read.
    good_runs(t.path());
    std::fs::remove_file(&looped).unwrap();
    let (code, out, err) = sweep_compare(&[t.path()], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("VERDICT"), "{out}");
}
