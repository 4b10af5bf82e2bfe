//! Shared by the harness tests: temporary copies of `examples/user-crate` and a way to run the
//! real `mldebug` binary in them.
//!
//! Every copy builds into one persistent target dir (`target/e2e-user-crate`), so candle is
//! compiled once and each copy only adds its own small crate and the harness; each copy keeps
//! its folder from run to run ([`CrateCopy`]), so a rerun rebuilds only what changed.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The target dir every copy of the example crate shares.
pub fn e2e_target() -> PathBuf {
    repo().join("target").join("e2e-user-crate")
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
    let mut files = vec![("Cargo.toml", manifest.into_bytes())];
    if let Ok(lock) = std::fs::read(src.join("Cargo.lock")) {
        files.push(("Cargo.lock", lock));
    }
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
        text = text.replace(real.to_str().unwrap(), "[CRATE]");
    }
    text = text.replace(dir.to_str().unwrap(), "[CRATE]");
    text = text.replace(e2e_target().to_str().unwrap(), "[TARGET]");
    text.replace(repo().to_str().unwrap(), "[REPO]")
}
