//! `mldebug doctor` on run traces that are not quite as `mldebug run` wrote them: a byte-order
//! mark before the first line, a last line cut mid-record (copied while being written), huge
//! numbers, and lines that do not read. Each is judged as a trace (with a note) or refused as
//! bad input naming the file and the line: never read as some other log and passed.

use std::path::Path;
use std::process::Command;

/// A run of `steps` optimizer steps whose gradients carry over at every step (a fail).
fn trace(steps: u64) -> String {
    let mut lines = vec![
        r#"{"kind": "start", "trace": 1, "pid": 10, "rank": null, "world_size": null}"#.to_string(),
        r#"{"kind": "model", "model": 0, "class": "Net", "where": "train.py:40", "shifts_labels": false, "parameters": 1000, "trainable": 1000, "dropout": 0, "batchnorm": 0, "lora": 0, "training": true}"#.to_string(),
        r#"{"kind": "optimizer", "optimizer": 0, "class": "SGD", "where": "train.py:45", "tensors": 4, "numel": 1000, "in_models": 1000, "not_in_models": 0}"#.to_string(),
    ];
    for s in 1..=steps {
        lines.push(format!(
            r#"{{"kind": "step", "step": {s}, "optimizer": 0, "loss": {}, "forwards": 1, "backwards": 1, "training": true, "grads_before_backward": "{}", "grad_norm": 1.0, "with_grad": 4, "without_grad": 0, "changed": 4, "checked": 4, "update_ratio": 0.001}}"#,
            2.0 - s as f64 * 0.01,
            if s == 1 { "none" } else { "carried" }
        ));
    }
    lines.push(format!(
        r#"{{"kind": "end", "reason": "steps", "steps": {steps}}}"#
    ));
    lines.join("\n") + "\n"
}

/// `mldebug --json doctor FILE`: (exit code, the document or null, stderr).
fn doctor(path: &Path) -> (i32, serde_json::Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(["--json", "doctor"])
        .arg(path)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn symptoms(doc: &serde_json::Value) -> Vec<String> {
    doc["runs"][0]["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|f| f["symptom"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_trace_after_a_byte_order_mark_is_judged_as_the_same_trace() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.jsonl");
    let bom = dir.path().join("bom.jsonl");
    std::fs::write(&plain, trace(8)).unwrap();
    std::fs::write(&bom, format!("\u{feff}{}", trace(8))).unwrap();
    let (code, want, err) = doctor(&plain);
    assert_eq!(code, 1, "{err}");
    assert!(symptoms(&want).contains(&"grads-accumulate".to_string()));
    let (code, got, err) = doctor(&bom);
    assert_eq!(code, 1, "{err}");
    assert_eq!(symptoms(&got), symptoms(&want));
}

#[test]
fn a_trace_cut_mid_line_is_judged_with_a_note_and_a_bad_line_elsewhere_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let whole = trace(8);
    let cut_at = whole.len() - 20;
    let cut = dir.path().join("cut.jsonl");
    std::fs::write(&cut, &whole[..cut_at]).unwrap();
    let (code, doc, err) = doctor(&cut);
    assert_eq!(code, 1, "{err}");
    assert!(symptoms(&doc).contains(&"grads-accumulate".to_string()));
    assert!(err.contains("line 12 ends without a line end"), "{err}");
    // The same damage anywhere but the last line is bad input, named by its line.
    let mut lines: Vec<&str> = whole.lines().collect();
    lines[4] = "{\"kind\": \"step\", \"st";
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let (code, doc, err) = doctor(&bad);
    assert_eq!(code, 2, "{err}");
    assert!(doc.is_null());
    assert!(err.contains("bad.jsonl") && err.contains("line 5"), "{err}");
}

#[test]
fn huge_numbers_in_a_trace_are_judged_or_refused_never_passed_unread() {
    let dir = tempfile::tempdir().unwrap();
    for (what, big) in [
        ("2^63", "9223372036854775808"),
        ("2^64", "18446744073709551616"),
        ("1e400", "1e400"),
    ] {
        let text = trace(8).replace("\"step\": 8,", &format!("\"step\": {big},"));
        let p = dir.path().join("big.jsonl");
        std::fs::write(&p, &text).unwrap();
        let (code, doc, err) = doctor(&p);
        match code {
            // Judged as a trace: the carried gradients are still found.
            1 => assert!(
                symptoms(&doc).contains(&"grads-accumulate".to_string()),
                "{what}: {doc}"
            ),
            // Refused, naming the file and the line.
            2 => assert!(
                err.contains("big.jsonl") && err.contains("line 11"),
                "{what}: {err}"
            ),
            c => panic!("{what}: exit {c}: {err} {doc}"),
        }
    }
}

#[test]
fn a_start_record_without_its_version_is_a_trace_refused_not_a_log_passed() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("old.jsonl");
    let text = trace(4).replacen("\"trace\": 1, ", "", 1);
    std::fs::write(&p, text).unwrap();
    let (code, doc, err) = doctor(&p);
    assert_eq!(code, 2, "{err} {doc}");
    assert!(err.contains("old.jsonl") && err.contains("line 1"), "{err}");
}

#[test]
fn a_terminal_that_reports_no_width_gets_a_table_a_person_can_read() {
    // A pty that was never sized reports 0 columns: the table must not wrap a character a line.
    let Ok(fixture) = std::fs::read_dir(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run_zoo"),
    ) else {
        return;
    };
    let Some(trace) = fixture.flatten().map(|e| e.path()).find(|p| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("no_zero_grad."))
    }) else {
        return;
    };
    let spawn = format!(
        "import pty, sys; pty.spawn([{:?}, 'doctor', {:?}])",
        env!("CARGO_BIN_EXE_mldebug"),
        trace.display().to_string()
    );
    let Ok(out) = Command::new("python3").args(["-c", &spawn]).output() else {
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("grads-accumulate"), "{text}");
    // The summary's words stay on one line, as at the width of a pipe.
    assert!(text.contains("gradients carry over"), "{text}");
}
