//! Shared by the harness tests: temporary copies of `examples/user-crate` and a way to run the
//! real `mldebug` binary in them.
//!
//! Every copy builds into one persistent target dir (`target/e2e-user-crate`), so candle is
//! compiled once and each copy only adds its own small crate and the harness.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The target dir every copy of the example crate shares.
pub fn e2e_target() -> PathBuf {
    repo().join("target").join("e2e-user-crate")
}

/// A copy of `examples/user-crate` in a fresh temporary directory, its `src/lib.rs` passed
/// through `edit` (to plant a bug) and its path dependency on the diagnostics made absolute.
pub fn user_crate_copy(edit: impl Fn(String) -> String) -> tempfile::TempDir {
    let src = repo().join("examples").join("user-crate");
    let dir = tempfile::Builder::new()
        .prefix("mldebug-user-crate-")
        .tempdir()
        .unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
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
    std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
    if let Ok(lock) = std::fs::read(src.join("Cargo.lock")) {
        std::fs::write(dir.path().join("Cargo.lock"), lock).unwrap();
    }
    let lib = std::fs::read_to_string(src.join("src").join("lib.rs")).unwrap();
    let edited = edit(lib.clone());
    std::fs::write(dir.path().join("src").join("lib.rs"), edited).unwrap();
    dir
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
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut text = text.replace(e2e_target().to_str().unwrap(), "[TARGET]");
    text = text.replace(repo().to_str().unwrap(), "[REPO]");
    if let Ok(real) = dir.canonicalize() {
        text = text.replace(real.to_str().unwrap(), "[CRATE]");
    }
    text.replace(dir.to_str().unwrap(), "[CRATE]")
}
