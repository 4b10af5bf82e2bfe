//! Bad input to `mldebug check` is refused before anything is built or run (exit 2, naming what
//! is wrong): a malformed `--batch` file for a model in a crate (it was "the model returned an
//! error", exit 4, after a build), and flags that do not apply to the model (`--batch
//! does-not-exist.safetensors` with a zoo model once ran and passed).

use crate::harness_support;

use harness_support::{mldebug, repo, show};
use std::path::Path;
use std::time::{Duration, Instant};

/// A copy of `examples/tinylm` (no mldebug in it), not built: a refusal must come before any
/// build.
fn tinylm() -> tempfile::TempDir {
    let src = repo().join("examples").join("tinylm");
    let dir = tempfile::Builder::new()
        .prefix("mldebug-batchfile-")
        .tempdir()
        .unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    for f in ["Cargo.toml", "Cargo.lock", "src/lib.rs"] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    dir
}

/// A safetensors file of this header and data.
fn write(path: &Path, header: &str, data: &[u8]) {
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    std::fs::write(path, bytes).unwrap();
}

fn i64s(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn a_malformed_batch_is_bad_input_naming_the_file_and_the_tensor_before_any_build() {
    let krate = tinylm();
    let ids = |n: usize| i64s(&vec![1; n]);
    let lm = |t: &str| {
        format!(
            r#"{{"input":{{"dtype":"I64","shape":[2,4],"data_offsets":[0,64]}},"targets":{t}}}"#
        )
    };
    let mut data = ids(8);
    let mut past_vocab = ids(8);
    past_vocab.extend(i64s(&[2, 3, 4, 500, 2, 3, 4, -100]));
    data.extend(ids(8));
    let cases: [(&str, String, Vec<u8>, &[&str]); 6] = [
        (
            "offsets",
            lm(r#"{"dtype":"I64","shape":[2,4],"data_offsets":[64,100]}"#),
            data.clone(),
            &["tensor `targets`", "data_offsets [64, 100]"],
        ),
        (
            "dtype",
            lm(r#"{"dtype":"BOOL","shape":[2,4],"data_offsets":[64,72]}"#),
            [ids(8), vec![0; 8]].concat(),
            &["tensor `targets`", "dtype `BOOL`"],
        ),
        (
            "duplicate",
            r#"{"input":{"dtype":"I64","shape":[2,4],"data_offsets":[0,64]},
                "targets":{"dtype":"I64","shape":[2,4],"data_offsets":[64,128]},
                "targets":{"dtype":"I64","shape":[2,4],"data_offsets":[64,128]}}"#
                .to_string(),
            data.clone(),
            &["tensor `targets` is named twice"],
        ),
        (
            "rank",
            lm(r#"{"dtype":"I64","shape":[2,2,2],"data_offsets":[64,128]}"#),
            data.clone(),
            &["tensor `targets`", "[2, 2, 2]"],
        ),
        (
            "rows",
            r#"{"input":{"dtype":"I64","shape":[0,4],"data_offsets":[0,0]},
                "targets":{"dtype":"I64","shape":[0,4],"data_offsets":[0,0]}}"#
                .to_string(),
            Vec::new(),
            &["tensor `input`", "at least one row"],
        ),
        (
            "vocab",
            lm(r#"{"dtype":"I64","shape":[2,4],"data_offsets":[64,128]}"#),
            past_vocab,
            &["tensor `targets`", "outside [0, 48)", "500"],
        ),
    ];
    for (name, header, bytes, says) in cases {
        let file = format!("{name}.safetensors");
        write(&krate.path().join(&file), &header, &bytes);
        let t = Instant::now();
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
                &file,
                "--vocab",
                "48",
                "--offline",
            ],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", show(&out));
        assert!(err.contains(&file), "{name}: names the file: {err}");
        for s in says {
            assert!(err.contains(s), "{name}: `{s}` in {err}");
        }
        // Nothing was compiled: cargo metadata alone takes well under this.
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "{name}: {:?}",
            t.elapsed()
        );
    }
}

#[test]
fn flags_for_a_crate_are_refused_with_a_zoo_model_and_torch_flags_with_a_candle_one() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (&["--batch", "does-not-exist.safetensors"], "--batch"),
        (&["--vocab", "48"], "--vocab"),
        (&["--features", "cuda"], "--features"),
        (&["--release"], "--release"),
        (&["--python", "python3"], "--python"),
    ];
    for (extra, flag) in cases {
        let mut args = vec!["check", "all", "--model", "zoo::mlp"];
        args.extend_from_slice(extra);
        let out = mldebug(dir.path(), &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", show(&out));
        assert!(
            err.contains(&format!("{flag} does not apply to a zoo model")),
            "{err}"
        );
        assert!(out.stdout.is_empty(), "no check ran: {}", show(&out));
    }
    let out = mldebug(
        dir.path(),
        &[
            "check",
            "all",
            "--model",
            "crate::Net",
            "--lora",
            "targets=q",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        err.contains("--lora does not apply to a model in your crate"),
        "{err}"
    );
}
