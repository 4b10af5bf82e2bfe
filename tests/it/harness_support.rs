//! Shared by the harness tests: temporary copies of `examples/user-crate` and a way to run the
//! real `mldebug` binary in them.
//!
//! Every copy builds into the target dir of the `cargo test` that built this binary, with a
//! manifest ([`e2e_manifest`]) under which cargo resolves candle and everything it depends on
//! exactly as it did for the workspace's own tests, so candle's compiled artefacts are reused
//! and each copy only adds its own small crate and the harness
//! ([`e2e_crates_build_candle_as_the_workspace_does`] fails when that stops holding); each copy
//! keeps its folder from run to run ([`CrateCopy`]), so a rerun rebuilds only what changed.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The target dir every copy of the example crates builds into: the one this test binary was
/// built in (`CARGO_TARGET_TMPDIR` is its `tmp` folder).
pub fn e2e_target() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target dir holds tmp/")
        .to_path_buf()
}

/// A crate the tests build: a folder of its own for each copy a test makes, under
/// `target/e2e-crates`, and the same folder on every run. Its files are rewritten only when
/// their bytes change, so a rerun with nothing changed finds the crate and its harness already
/// built (cargo goes by modification times), while each test still starts from exactly the
/// files it asked for: anything else in the folder (a batch a test wrote) is removed first.
pub struct CrateCopy {
    path: PathBuf,
}

impl CrateCopy {
    /// The folder (`<repo>/target/e2e-crates/<kind>-<test>-<n>`) holding exactly `files`.
    pub fn new(kind: &str, files: &[(&str, Vec<u8>)]) -> CrateCopy {
        let path = repo()
            .join("target")
            .join("e2e-crates")
            .join(format!("{kind}-{}", copy_name(files)));
        std::fs::create_dir_all(&path).unwrap();
        remove_all_but(&path, files);
        for (name, bytes) in files {
            let p = path.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            if std::fs::read(&p).ok().as_deref() != Some(bytes.as_slice()) {
                std::fs::write(&p, bytes).unwrap();
            }
        }
        CrateCopy { path }
    }

    /// The crate's folder.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// `<test name>-<n>` for the n-th copy the running test makes (libtest names each test's
/// thread after it); `<content hash>` where the thread has no test's name.
fn copy_name(files: &[(&str, Vec<u8>)]) -> String {
    static COUNTS: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());
    let thread = std::thread::current();
    match thread.name().filter(|n| *n != "main") {
        Some(test) => {
            let mut counts = COUNTS.lock().unwrap_or_else(|e| e.into_inner());
            let n = counts.entry(test.to_string()).or_default();
            *n += 1;
            let test: String = test
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            format!("{test}-{n}")
        }
        None => {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            files.hash(&mut h);
            format!("{:016x}", h.finish())
        }
    }
}

/// Removes every file under `dir` that is not one of `files`.
fn remove_all_but(dir: &Path, files: &[(&str, Vec<u8>)]) {
    let keep: Vec<PathBuf> = files.iter().map(|(n, _)| dir.join(n)).collect();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if !keep.contains(&p) {
                std::fs::remove_file(&p).unwrap();
            }
        }
    }
}

/// Dependencies an e2e copy declares only so that cargo enables on candle's dependency graph
/// the features the workspace's other crates enable there (serde_json's `unbounded_depth` by
/// cargo_metadata and `float_roundtrip` by jsonschema, rustix's terminal features by crossterm,
/// syn's `full` by clap's derive and `visit-mut` by tracing's, ...). Features are part of
/// every compiled artefact's identity: with one of them different, cargo compiles candle and
/// everything under it a second time, minutes on two cores.
const ALIGNING_DEPENDENCIES: &str = r#"serde_json = { version = "1", features = ["unbounded_depth", "float_roundtrip"] }
hashbrown = { version = "0.17", features = ["raw-entry"] }
rustix = { version = "1", features = ["stdio", "termios"] }
once_cell = "1"
serde_core = "1"
num-complex = { version = "0.4", default-features = false, features = ["std"] }
tracing = "0.1"
clap = { version = "4.6", features = ["derive", "wrap_help"] }
"#;

/// The crates of the copies' dependency graph that the workspace's `Cargo.toml` compiles
/// unoptimised in the dev profile (proc macros; a tokenizer and its regex engine that candle
/// links and no test calls): the copies say the same, or their artefacts would differ.
pub const E2E_UNOPTIMISED: [&str; 19] = [
    "syn",
    "proc-macro2",
    "serde_derive",
    "darling_core",
    "darling_macro",
    "tracing-attributes",
    "clap_derive",
    "zerocopy-derive",
    "yoke-derive",
    "zerofrom-derive",
    "thiserror-impl",
    "bytemuck_derive",
    "synstructure",
    "derive_builder_core",
    "tokenizers",
    "fancy-regex",
    "regex-automata",
    "regex-syntax",
    "aho-corasick",
];

/// An example crate's `manifest` as the e2e copies build it: [`ALIGNING_DEPENDENCIES`] added,
/// and the workspace's dev profile for dependencies (optimised, no debug info, the
/// [`E2E_UNOPTIMISED`] crates at opt-level 0). The harness copies the profile like any
/// user's, so its build matches too. mldebug's own crates get the profile the harness gives
/// them in a crate that does not depend on them (`quick_checks_profile`: no optimisation, no
/// debug info), so the copies that depend on them (`examples/user-crate`) and the ones that do
/// not (`examples/tinylm`) share one build of them instead of compiling them twice, once at
/// opt-level 3 (the longest single compile of a fresh run's end-to-end tests).
pub fn e2e_manifest(manifest: &str) -> String {
    let deps = "[dependencies]\n";
    let all = "[profile.dev.package.\"*\"]\nopt-level = 3\n";
    assert!(
        manifest.contains(deps) && manifest.contains(all),
        "the example's manifest no longer has `{deps}` and `{all}`"
    );
    let mut out = manifest
        .replacen(deps, &format!("{deps}{ALIGNING_DEPENDENCIES}"), 1)
        .replacen(all, &format!("{all}debug = false\n"), 1);
    for name in E2E_UNOPTIMISED {
        out.push_str(&format!("\n[profile.dev.package.{name}]\nopt-level = 0\n"));
    }
    let mut doc: toml::Table = out.parse().expect("the copy's manifest is TOML");
    let has_ours = doc
        .get("dependencies")
        .and_then(|d| d.get("mldebug-diagnostics"))
        .is_some();
    if has_ours {
        mldebug::harness::generate::quick_checks_profile(&mut doc);
        out = toml::to_string(&doc).expect("a TOML table prints");
    }
    out
}

/// The workspace's `Cargo.lock`, which every copy starts from, so that cargo picks the
/// versions the workspace built (it drops what the copy does not use).
pub fn workspace_lock() -> Vec<u8> {
    std::fs::read(repo().join("Cargo.lock")).expect("Cargo.lock")
}

/// A copy of `examples/user-crate` ([`CrateCopy`]), its `src/lib.rs` passed through `edit` (to
/// plant a bug) and its path dependency on the diagnostics made absolute.
pub fn user_crate_copy(edit: impl Fn(String) -> String) -> CrateCopy {
    let src = repo().join("examples").join("user-crate");
    let manifest = std::fs::read_to_string(src.join("Cargo.toml")).unwrap();
    let diagnostics = repo().join("diagnostics");
    let manifest = manifest.replace(
        "path = \"../../diagnostics\"",
        &format!("path = {:?}", diagnostics.to_str().unwrap()),
    );
    assert!(
        manifest.contains(diagnostics.to_str().unwrap()),
        "path dep not rewritten"
    );
    let mut files = vec![
        ("Cargo.toml", e2e_manifest(&manifest).into_bytes()),
        ("Cargo.lock", workspace_lock()),
    ];
    let lib = std::fs::read_to_string(src.join("src").join("lib.rs")).unwrap();
    files.push(("src/lib.rs", edit(lib).into_bytes()));
    CrateCopy::new("user-crate", &files)
}

/// Replace `from` (which must occur in `text`) by `to`.
pub fn plant(text: String, from: &str, to: &str) -> String {
    assert!(
        text.contains(from),
        "`{from}` is not in the example any more"
    );
    text.replacen(from, to, 1)
}

/// Run the real `mldebug` binary in `dir`, building into the shared target dir.
pub fn mldebug(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mldebug"))
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", e2e_target())
        .env("RUST_BACKTRACE", "0")
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap()
}

/// Run cargo (the one running the tests) in `dir`, building into the shared target dir, as
/// [`mldebug`] does.
pub fn cargo(dir: &Path, args: &[&str]) -> Output {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", e2e_target())
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap()
}

/// The exit code, stdout and stderr of a run, for assertion messages.
pub fn show(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// stderr with the temporary directory, the repository and the target dir replaced by fixed
/// names, so snapshots do not depend on where they ran.
pub fn redacted_stderr(out: &Output, dir: &Path) -> String {
    // The crate first: its folder may lie inside the repository.
    let mut text = String::from_utf8_lossy(&out.stderr).into_owned();
    if let Ok(real) = dir.canonicalize() {
        text = replace_path(&text, &real, "[CRATE]");
    }
    text = replace_path(&text, dir, "[CRATE]");
    text = replace_path(&text, &e2e_target(), "[TARGET]");
    replace_path(&text, &repo(), "[REPO]")
}

/// `text` with every mention of the folder `path` replaced by `with`: only whole names, so a
/// sibling whose name starts with the same letters (the repository `/tmp/x`, cargo's home
/// `/tmp/x-cargo`) is left as it is.
fn replace_path(text: &str, path: &Path, with: &str) -> String {
    let path = path.to_str().unwrap();
    let continues_name = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | '.');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(path) {
        let after = &rest[at + path.len()..];
        out.push_str(&rest[..at]);
        if after.chars().next().is_some_and(continues_name) {
            out.push_str(path);
        } else {
            out.push_str(with);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[test]
fn a_folder_is_redacted_only_as_a_whole_name() {
    let text = "/tmp/x/src/lib.rs:1 /tmp/x-cargo/registry/src/a.rs /tmp/x\n/tmp/x.old /tmp/xy";
    assert_eq!(
        replace_path(text, Path::new("/tmp/x"), "[REPO]"),
        "[REPO]/src/lib.rs:1 /tmp/x-cargo/registry/src/a.rs [REPO]\n/tmp/x.old /tmp/xy"
    );
}
