//! The house rules of the source tree, kept by a test: every source file outside tests is at
//! most 600 lines (a longer one holds more than one concept and is to be split) and opens with
//! module docs that say what it is. Functions over 120 lines are caught by clippy's
//! `too_many_lines` (threshold in clippy.toml). The Python the binary embeds and runs (the run
//! probes, torch/run/, and the torch driver, torch/driver/) is held to the same rules, a module
//! docstring standing for the docs; the example scripts of torch/zoo and torch/run_zoo are the
//! user's kind of code and are not. The tests' replay of kept torch driver runs stays out of
//! every build but the tests'.

use std::path::{Path, PathBuf};

/// The most lines a source file outside tests may have.
const MAX_LINES: usize = 600;

/// The folders of embedded Python held to the rules.
const PYTHON_DIRS: [&str; 2] = ["torch/run", "torch/driver"];

/// Files with extension `ext` under `dir`, test folders (and `tests.rs`) left out.
fn files_with(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            // Test folders and test-only modules are not held to the limit.
            if path.file_name().is_some_and(|n| n == "tests") {
                continue;
            }
            files_with(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext)
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(path);
        }
    }
}

fn source_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    files_with(&root.join("src"), "rs", &mut files);
    files_with(&root.join("diagnostics/src"), "rs", &mut files);
    for krate in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        files_with(&krate.path().join("src"), "rs", &mut files);
    }
    files.sort();
    files
}

#[test]
fn no_source_file_is_over_600_lines_and_every_one_has_module_docs() {
    let files = source_files();
    assert!(files.len() > 100, "found only {} files", files.len());
    let mut long = Vec::new();
    let mut undocumented = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let lines = text.lines().count();
        if lines > MAX_LINES {
            long.push(format!("{} ({lines} lines)", f.display()));
        }
        // main.rs's docs are the crate's (`//!` after a `#![...]` attribute is fine too).
        let first_code = text
            .lines()
            .find(|l| !l.trim().is_empty() && !l.starts_with("#!["));
        if !first_code.is_some_and(|l| l.starts_with("//!")) {
            undocumented.push(f.display().to_string());
        }
    }
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:#?}");
    assert!(
        undocumented.is_empty(),
        "no module docs (`//!` first): {undocumented:#?}"
    );
}

#[test]
fn no_embedded_python_file_is_over_600_lines_and_every_one_opens_with_a_docstring() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in PYTHON_DIRS {
        files_with(&root.join(dir), "py", &mut files);
    }
    files.sort();
    assert!(files.len() > 20, "found only {} files", files.len());
    let mut long = Vec::new();
    let mut undocumented = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let lines = text.lines().count();
        if lines > MAX_LINES {
            long.push(format!("{} ({lines} lines)", f.display()));
        }
        // A module docstring is the first statement: only blank and comment lines before it.
        let first_code = text
            .lines()
            .map(str::trim_start)
            .find(|l| !l.is_empty() && !l.starts_with('#'));
        if !first_code.is_some_and(|l| l.starts_with("\"\"\"") || l.starts_with("r\"\"\"")) {
            undocumented.push(f.display().to_string());
        }
    }
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:#?}");
    assert!(
        undocumented.is_empty(),
        "no module docstring (`\"\"\"` first): {undocumented:#?}"
    );
}

/// The replay of kept torch driver runs (`MLDEBUG_TORCH_REPLAY`, src/torch/replay.rs) is the
/// tests' alone: its feature is in no default and no other feature, and only the package's
/// dev-dependency on itself turns it on, so a build without the tests (`cargo build --release`,
/// `cargo install`), which resolves no dev-dependency, has no such variable.
#[test]
fn the_torch_replay_feature_is_turned_on_by_the_tests_alone() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let manifest: toml::Table = toml::from_str(&text).unwrap();
    let features = manifest["features"].as_table().unwrap();
    assert!(features.contains_key("torch-replay"));
    for (name, enables) in features {
        let enables = enables.as_array().unwrap();
        assert!(
            !enables.iter().any(|f| f.as_str() == Some("torch-replay")),
            "feature {name} turns on torch-replay"
        );
    }
    assert!(!manifest["dependencies"]
        .as_table()
        .unwrap()
        .contains_key("mldebug"));
    let own = &manifest["dev-dependencies"]["mldebug"];
    assert_eq!(own["path"].as_str(), Some("."));
    let on: Vec<&str> = own["features"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.as_str())
        .collect();
    assert_eq!(on, ["torch-replay"]);
}
