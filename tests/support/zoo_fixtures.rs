//! The run zoo's traces as committed fixtures: for every program of `torch/run_zoo/manifest.json`,
//! the trace `mldebug run` wrote for it on seed [`SEED`], kept in `tests/fixtures/run_zoo/` as
//! `<name>.<key>.jsonl`, where the key is a hash of everything that produced it and nothing of
//! the machine: the probes and their bootstrap (`torch/run/mldebug_run`, `sitecustomize.py`), the
//! environment the launcher gives them (`src/run/probes.rs`), the pinned torch
//! (`torch/requirements.txt`), the program's own files, its command, steps and seed.
//!
//! - The judge tier (`tests/it/run_zoo_fixtures.rs`, no torch needed) judges every fixture with
//!   `mldebug doctor` against the manifest and a snapshot, and reads every record strictly.
//! - The live tier (`tests/torch/run_zoo.rs`) watches again only the programs whose fixture key
//!   no longer matches (and fails, saying to bless them), plus a fixed smoke sample every time.
//! - `MLDEBUG_BLESS=1` writes the fixtures anew from what was watched; `MLDEBUG_TEST_FULL=1`
//!   watches every program on every seed.

use super::cache;
use std::path::{Path, PathBuf};

/// The seed the fixtures are watched with.
pub const SEED: u64 = 0;

/// One program of the manifest.
#[derive(Debug, Clone)]
pub struct Entry {
    pub name: String,
    /// The command as the manifest writes it (`{seed}` unreplaced).
    pub command: Vec<String>,
    pub clean: bool,
    /// Finding ids it must be reported with (empty for a clean program).
    pub expect: Vec<String>,
    /// Its fixed twin, for a buggy program that has one.
    pub twin_of: Option<String>,
    /// `--steps` as the manifest gives it: a number, or `"auto"` (the default cycle window).
    pub steps: String,
    /// The exception a program whose bug stops it raises (`"IndexError"`): its run fails on
    /// its own (`mldebug run` exits 4) and is judged all the same.
    pub raises: Option<String>,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// Every program of the manifest, in its order.
pub fn entries() -> Vec<Entry> {
    let text = std::fs::read_to_string(repo().join("torch/run_zoo/manifest.json"))
        .expect("torch/run_zoo/manifest.json");
    let entries: Vec<serde_json::Value> = serde_json::from_str(&text).expect("manifest is JSON");
    entries
        .iter()
        .map(|e| {
            let name = e["name"].as_str().expect("name").to_string();
            let clean = e["clean"].as_bool().expect("clean");
            let expect: Vec<String> = e["expect"]
                .as_array()
                .map(|a| a.iter().map(|x| x.as_str().unwrap().to_string()).collect())
                .unwrap_or_default();
            assert!(
                clean == expect.is_empty(),
                "{name}: a clean program expects nothing, a buggy one something"
            );
            Entry {
                name,
                command: e["command"]
                    .as_array()
                    .expect("command")
                    .iter()
                    .map(|w| w.as_str().unwrap().to_string())
                    .collect(),
                clean,
                expect,
                twin_of: e["twin_of"].as_str().map(str::to_string),
                steps: e["steps"].as_u64().map_or_else(
                    || e["steps"].as_str().unwrap_or("30").to_string(),
                    |n| n.to_string(),
                ),
                raises: e["raises"].as_str().map(str::to_string),
            }
        })
        .collect()
}

impl Entry {
    /// Its command for `seed`.
    pub fn command(&self, seed: u64) -> Vec<String> {
        self.command
            .iter()
            .map(|w| w.replace("{seed}", &seed.to_string()))
            .collect()
    }

    /// The program's own files, relative to the repository: each script the command names, and
    /// the top package of a `-m` module.
    fn files(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut words = self.command.iter();
        while let Some(w) = words.next() {
            if w == "-m" {
                if let Some(m) = words.next() {
                    let top = m.split('.').next().unwrap_or(m);
                    out.push(format!("torch/run_zoo/{top}"));
                }
            } else if w.ends_with(".py") {
                out.push(format!("torch/run_zoo/{w}"));
            }
        }
        out
    }

    /// The key of its fixture on `seed`: what produced the trace, nothing of the machine.
    pub fn key(&self, seed: u64) -> u64 {
        let mut paths = vec![
            "torch/run/mldebug_run",
            "torch/run/sitecustomize.py",
            "src/run/probes.rs",
            "torch/requirements.txt",
        ];
        let own = self.files();
        paths.extend(own.iter().map(String::as_str));
        let salt = format!("{:?} steps {} seed {seed}", self.command, self.steps);
        cache::files_hash(&paths, salt.as_bytes())
    }

    /// What is wrong with `found` ((finding id, severity) pairs) for this program, if anything:
    /// a fail on a clean program, or its bug not reported at warn or fail.
    pub fn verdict(&self, found: &[(String, String)]) -> Option<String> {
        if self.clean {
            let fails: Vec<_> = found.iter().filter(|f| f.1 == "fail").collect();
            return (!fails.is_empty()).then(|| format!("false alarm {fails:?}"));
        }
        let missed: Vec<_> = self
            .expect
            .iter()
            .filter(|id| {
                !found
                    .iter()
                    .any(|f| &f.0 == *id && (f.1 == "fail" || f.1 == "warn"))
            })
            .collect();
        (!missed.is_empty()).then(|| format!("missed {missed:?}, found {found:?}"))
    }

    /// Its committed fixture and the key it was watched under, if there is one.
    pub fn fixture(&self) -> Option<(PathBuf, u64)> {
        fixtures()
            .into_iter()
            .find_map(|(name, key, path)| (name == self.name).then_some((path, key)))
    }

    /// Whether its fixture was watched under today's key.
    pub fn is_current(&self) -> bool {
        self.fixture().is_some_and(|(_, k)| k == self.key(SEED))
    }

    /// Writes `trace` as its fixture under today's key, in place of any older one.
    pub fn bless(&self, trace: &[u8]) {
        for (name, _, path) in fixtures() {
            if name == self.name {
                let _ = std::fs::remove_file(path);
            }
        }
        let to = dir().join(format!("{}.{:016x}.jsonl", self.name, self.key(SEED)));
        cache::write(&to, trace);
    }
}

/// The fixtures' folder.
pub fn dir() -> PathBuf {
    repo().join("tests/fixtures/run_zoo")
}

/// Every fixture file: (program name, key, path).
pub fn fixtures() -> Vec<(String, u64, PathBuf)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir()).into_iter().flatten().flatten() {
        let path = e.path();
        let Some(file) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(stem) = file.strip_suffix(".jsonl") else {
            continue;
        };
        let Some((name, key)) = stem.rsplit_once('.') else {
            continue;
        };
        if let Ok(key) = u64::from_str_radix(key, 16) {
            out.push((name.to_string(), key, path.clone()));
        }
    }
    out.sort();
    out
}

/// `MLDEBUG_BLESS=1`: write the fixtures of what was watched.
pub fn blessing() -> bool {
    flag("MLDEBUG_BLESS")
}

/// `MLDEBUG_TEST_FULL=1`: every program on every seed, live.
pub fn full() -> bool {
    flag("MLDEBUG_TEST_FULL")
}

fn flag(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0")
}
