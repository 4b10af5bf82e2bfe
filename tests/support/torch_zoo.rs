//! The PyTorch zoo's driver runs as committed fixtures: for every case of `torch/zoo/zoo.json`
//! (a clean model with `check all`, a twin with each check it breaks), what the embedded driver
//! measured over seeds 0-4, kept in `tests/fixtures/torch_zoo/<name>.jsonl` in the layout the
//! binary's replay reads (`MLDEBUG_TORCH_REPLAY` naming one file, `src/torch/replay.rs`). Its
//! first line holds the key, a hash of everything that produced it and nothing of the machine:
//! the driver's Python (`torch/driver`), the case's model files, its command line and the
//! versions of torch (and of transformers and peft where the case needs them).
//!
//! - The judge tier (`tests/it/torch_zoo_fixtures.rs`, no torch needed) replays every fixture
//!   through `mldebug check` and holds its verdicts to the zoo's rule and to a snapshot.
//! - The live tier (`tests/torch/zoo.rs`) measures again only the cases whose key no longer
//!   matches, or whose request the binary no longer makes, and fails saying to bless them;
//!   `MLDEBUG_BLESS=1` writes what it measured as the fixtures
//!   ([`super::zoo_fixtures::blessing`], the run zoo's switch).

use super::cache;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The seeds every case runs with, in one driver process (`--seeds 0-4`).
pub const SEEDS: u64 = 5;
/// A twin must fail the check it breaks on at least this many of the [`SEEDS`].
pub const TWIN_MIN_FAILS: usize = 4;
/// The nonce a fixture's lines carry (the binary puts the run's own in its place).
const NONCE: &str = "0fixture0nonce0";
/// What to run when a fixture is stale.
pub const BLESS: &str =
    "bless the fixtures: MLDEBUG_BLESS=1 cargo test --test torch zoo::clean_models";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The fixtures' folder.
pub fn dir() -> PathBuf {
    repo().join("tests/fixtures/torch_zoo")
}

/// One driver run of the zoo: a model and the checks it runs.
#[derive(Debug, Clone)]
pub struct Case {
    /// The fixture's name: the model's, with the check for a twin that breaks several.
    pub name: String,
    /// `mldebug` arguments (`--json check CHECK --torch SPEC [--lora L] --seeds 0-4`).
    pub args: Vec<String>,
    /// The check a twin must fail; `None` for a clean model (`check all`, none may fail).
    pub must_fail: Option<String>,
    /// The model's files, relative to the repository.
    files: Vec<String>,
    /// The Python packages it needs besides torch (`transformers`, `peft`).
    needs: Vec<String>,
}

/// Every case of the zoo, in its order.
pub fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(repo().join("torch/zoo/zoo.json")).expect("zoo.json");
    let zoo: Vec<serde_json::Value> = serde_json::from_str(&text).expect("zoo.json is JSON");
    let mut cases = Vec::new();
    for m in &zoo {
        let model = m["name"].as_str().expect("name").to_string();
        let target = m["target"].as_str().expect("target");
        let (spec, own) = match target.strip_prefix("hf:") {
            Some(rest) => (format!("hf:torch/zoo/{rest}"), format!("torch/zoo/{rest}")),
            None => {
                let file = target.split(':').next().unwrap_or(target);
                (format!("torch/zoo/{target}"), format!("torch/zoo/{file}"))
            }
        };
        let needs: Vec<String> = m["needs"]
            .as_array()
            .map(|a| a.iter().map(|n| n.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        // A model that needs transformers reads its config from the zoo's Hugging Face folder.
        let mut files = vec![own];
        if needs.iter().any(|n| n == "transformers") {
            files.push("torch/zoo/hf".to_string());
        }
        let mut extra = vec!["--torch".to_string(), spec];
        if let Some(l) = m["lora"].as_str() {
            extra.extend(["--lora".to_string(), l.to_string()]);
        }
        let breaks: Vec<String> = m["breaks"]
            .as_array()
            .map(|b| b.iter().map(|c| c.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        let clean = m["clean"].as_bool().expect("clean");
        assert!(
            clean == breaks.is_empty(),
            "{model}: a clean model breaks nothing, a twin something"
        );
        let checks: Vec<Option<String>> = if clean {
            vec![None]
        } else {
            breaks.iter().cloned().map(Some).collect()
        };
        let several = checks.len() > 1;
        for check in checks {
            let mut args = vec!["--json".to_string(), "check".to_string()];
            args.push(check.clone().unwrap_or_else(|| "all".to_string()));
            args.extend(extra.iter().cloned());
            args.extend(["--seeds".to_string(), format!("0-{}", SEEDS - 1)]);
            let name = match (&check, several) {
                (Some(c), true) => format!("{model}.{c}"),
                _ => model.clone(),
            };
            cases.push(Case {
                name,
                args,
                must_fail: check,
                files: files.clone(),
                needs: needs.clone(),
            });
        }
    }
    cases
}

/// Every fixture file in the folder.
pub fn fixtures() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir())
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    out.sort();
    out
}

/// The installed version of each package the zoo measures with (`torch`, `transformers`,
/// `peft`; absent: `none`), from `python`'s package metadata, without importing them.
pub fn versions(python: &Path) -> BTreeMap<String, String> {
    let script = "import importlib.metadata as m, sys\n\
                  for p in sys.argv[1:]:\n\
                  \x20   try:\n\
                  \x20       print(p, m.version(p))\n\
                  \x20   except m.PackageNotFoundError:\n\
                  \x20       print(p, 'none')\n";
    let out = Command::new(python)
        .args(["-c", script, "torch", "transformers", "peft"])
        .output()
        .expect("run the test Python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(p, v)| (p.to_string(), v.to_string()))
        .collect()
}

impl Case {
    /// Its committed fixture (which may not exist).
    pub fn fixture(&self) -> PathBuf {
        dir().join(format!("{}.jsonl", self.name))
    }

    /// The key of its measurement with these package versions: the driver, its model's files,
    /// its arguments and the versions of torch and of what it needs; nothing of the machine.
    pub fn key(&self, versions: &BTreeMap<String, String>) -> u64 {
        let mut paths = vec!["torch/driver"];
        paths.extend(self.files.iter().map(String::as_str));
        let mut salt = format!("{:?}", self.args);
        for p in std::iter::once("torch").chain(self.needs.iter().map(String::as_str)) {
            let v = versions.get(p).map_or("none", String::as_str);
            salt.push_str(&format!(" {p} {v}"));
        }
        cache::files_hash(&paths, salt.as_bytes())
    }

    /// The key its fixture was measured under, if it has one.
    pub fn fixture_key(&self) -> Option<u64> {
        let head = head(&self.fixture())?;
        u64::from_str_radix(head["key"].as_str()?, 16).ok()
    }

    /// `mldebug check` on this case with `kept` as the replay file (`MLDEBUG_TORCH_REPLAY`):
    /// read when it holds a run of today's request, else measured with `python` and written
    /// there.
    pub fn check(&self, kept: &Path, python: &Path) -> Output {
        Command::new(env!("CARGO_BIN_EXE_mldebug"))
            .args(&self.args)
            .env("MLDEBUG_PYTHON", python)
            .env("MLDEBUG_TORCH_REPLAY", kept)
            .env("OMP_NUM_THREADS", "1")
            .env("NO_COLOR", "1")
            .current_dir(repo())
            .output()
            .expect("run mldebug")
    }

    /// What the zoo's rule makes of `mldebug check`'s output: every problem (a clean model
    /// failing or erring in a check, a twin failing its check on fewer than [`TWIN_MIN_FAILS`]
    /// seeds, a report missing), and the statuses of every check per seed, one line per check.
    pub fn verdict(&self, out: &Output) -> (Vec<String>, String) {
        let name = &self.name;
        let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&out.stdout) else {
            return (
                vec![format!(
                    "{name}: not JSON, exit {:?}:\n{}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                )],
                String::new(),
            );
        };
        let reports = doc["reports"].as_array().cloned().unwrap_or_default();
        if reports.len() != SEEDS as usize {
            return (
                vec![format!(
                    "{name}: {} reports for {SEEDS} seeds:\n{doc}",
                    reports.len()
                )],
                String::new(),
            );
        }
        let mut problems = Vec::new();
        // check -> status per seed, in the order the reports name them.
        let mut statuses: Vec<(String, Vec<String>)> = Vec::new();
        let mut twin_fails = Vec::new();
        for report in &reports {
            let seed = report["seed"].as_u64().expect("seed");
            for c in report["checks"].as_array().into_iter().flatten() {
                let check = c["check"].as_str().unwrap_or("").to_string();
                let status = c["status"].as_str().unwrap_or("").to_string();
                match &self.must_fail {
                    None if status == "fail" || status == "error" => problems.push(format!(
                        "{name} seed {seed}: {check} {status}: {}",
                        c["summary"]
                    )),
                    Some(broken) if *broken == check && status == "fail" => twin_fails.push(seed),
                    _ => {}
                }
                match statuses.iter_mut().find(|s| s.0 == check) {
                    Some(s) => s.1.push(status),
                    None => statuses.push((check, vec![status])),
                }
            }
        }
        if let Some(broken) = &self.must_fail {
            if twin_fails.len() < TWIN_MIN_FAILS {
                problems.push(format!(
                    "{name} must fail {broken} in at least {TWIN_MIN_FAILS} of {SEEDS} seeds; \
                     it failed in {twin_fails:?}"
                ));
            }
        }
        let label = match &self.must_fail {
            None => "clean".to_string(),
            Some(c) => format!("breaks {c}"),
        };
        let mut table = format!("{name} ({label})\n");
        for (check, s) in statuses {
            table.push_str(&format!("  {check}: {}\n", s.join(" ")));
        }
        (problems, table)
    }

    /// Writes the driver run kept at `kept` as its fixture under `key`: the nonce made
    /// [`NONCE`], the repository's own path cut from the lines (the model's label), the progress
    /// lines (read only to draw a bar) left out. `Err` when `kept` holds no run.
    pub fn bless(&self, kept: &Path, key: u64) -> Result<(), String> {
        let text = std::fs::read_to_string(kept).map_err(|e| format!("no driver run kept: {e}"))?;
        let mut lines = text.lines();
        let mut head: serde_json::Value = lines
            .next()
            .and_then(|l| serde_json::from_str(l).ok())
            .ok_or("the kept run has no head line")?;
        let nonce = head["nonce"].as_str().unwrap_or("").to_string();
        if nonce.is_empty() {
            return Err("the kept run has no nonce".into());
        }
        head["nonce"] = NONCE.into();
        head["key"] = format!("{key:016x}").into();
        let prefix = format!("{}/", repo().display());
        let mut out = format!("{head}\n");
        for line in lines {
            let event = serde_json::from_str::<serde_json::Value>(line)
                .ok()
                .and_then(|v| v["event"].as_str().map(str::to_string));
            if event.as_deref() == Some("progress") {
                continue;
            }
            out.push_str(&line.replace(&nonce, NONCE).replace(&prefix, ""));
            out.push('\n');
        }
        cache::write(&self.fixture(), out.as_bytes());
        Ok(())
    }
}

/// Whether the file at `kept` holds a run measured now (its nonce not a fixture's).
pub fn measured_now(kept: &Path) -> bool {
    head(kept).is_some_and(|h| h["nonce"].as_str().is_some_and(|n| n != NONCE))
}

/// A kept file's first line.
fn head(path: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(text.lines().next()?).ok()
}
