//! Fuzz targets: arbitrary bytes fed to the entry points the CLI reads files through, one target
//! per parser. The `fuzz/` crate (cargo-fuzz, libFuzzer) calls [`run`] from one binary per
//! target, and `tests/it/fuzz_corpus_replay.rs` replays each target's corpus (`fuzz/corpus/<target>/`)
//! under `cargo test`.
//!
//! The sweep readers take paths, so the bytes are written under the file name the reader expects
//! into a fresh scratch directory (in `/dev/shm` where there is one, for speed), beside fixed,
//! valid companion files where a format needs them, and read with
//! [`read_paths`](crate::sweep::readers::read_paths) as `sweep-compare` does. The catalog targets
//! write a catalog folder and load it with [`catalog::from_dir`] as `--catalog DIR` does, then
//! verify and index it as `catalog verify`, `search` and `triage` do.
//!
//! `text_log` reads a plain-text training log as `doctor LOG --plot` does (read, judged,
//! rendered, plotted); `run_trace` reads a run trace as `doctor TRACE` does and as `mldebug
//! run` collects one process's trace file, parses and judges it; `watch` polls a text log and a JSONL file as `doctor --watch` does, once
//! after each piece of the input is appended to one of them (see [`TO_JSONL`], [`REWRITE`]).
//!
//! An error is an answer, not a finding: [`run`] discards it. A panic, an abort or a hang is a
//! finding. Formats whose records carry checksums (TFRecord, the W&B log) have a second target
//! that frames the fuzzer's pieces with valid checksums, so the protobuf decoders behind the
//! framing are reached at all.
//!
//! Not for users: the module is public only so the fuzz crate and the replay test can call it.

mod doctor;

pub use doctor::{REWRITE, TO_JSONL};

use crate::catalog::{self, search, verify};
use crate::sweep::readers::{self, crc32_update, masked_crc32c};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Every target, by the name of its fuzz binary and corpus folder.
pub const TARGETS: &[&str] = &[
    "run_json",
    "run_jsonl",
    "tfevents",
    "tfevents_records",
    "wandb_log",
    "wandb_records",
    "wandb_config",
    "csv",
    "lightning_hparams",
    "mlflow_meta",
    "mlflow_metric",
    "mlflow_param",
    "catalog",
    "evidence",
    "skill_front_matter",
    "search_query",
    "memory_config",
    "text_log",
    "watch",
    "run_trace",
];

/// Splits the input of the `*_records` targets into records, the `watch` target's into the
/// pieces written between polls, and the `catalog` target's input into files (a line
/// `%%% <path>` starts the file at `<path>`).
pub const RECORD_SEPARATOR: &[u8] = b"--record--";
pub const FILE_MARKER: &str = "%%% ";

/// A W&B run directory's name (`run-<date>_<time>-<id>`) and its log, as the SDK names them.
const WANDB_RUN_DIR: &str = "run-20240101_000000-fuzz";
const WANDB_LOG: &str = "run-fuzz.wandb";
/// An MLflow file-store run directory.
const MLFLOW_RUN_DIR: &str = "mlruns/0/fuzzrun";
/// Valid companions, so the fuzzed file is the only thing wrong.
const MLFLOW_META: &str = "run_id: fuzzrun\nrun_name: fuzz\nlifecycle_stage: active\n";
const MLFLOW_METRIC: &str = "1700000000000 0.5 0\n1700000000001 0.25 1\n";
const LIGHTNING_METRICS: &str = "step,epoch,train_loss\n0,0,1.0\n1,0,0.5\n";
const WANDB_SUMMARY: &str = "{\"loss\": 0.5, \"_step\": 1}\n";
/// A SKILL.md quoting the `evidence` target's file exactly, with an elision, and unmarked.
const EVIDENCE_ID: &str = "fuzz-source";
const EVIDENCE_SKILL: &str = "---\nname: mldebug\ndescription: Fuzz companion.\n---\n\n\
# Fuzz\n\n### One {#one .mindset}\n\n> Overfit a single batch.[^fuzz-source]\n\n\
### Two {#two .mindset}\n\n> Overfit [...] a bug somewhere.[^fuzz-source] *(unverified)*\n\n\
See `mldebug check overfit`.\n";

/// The W&B log's file header and LevelDB-log block framing.
const WANDB_HEADER: &[u8] = b":W&B\xe1\xbe\x00";
const WANDB_BLOCK: usize = 32 * 1024;
const WANDB_RECORD_HEADER: usize = 7;

/// Feeds `data` to `target`'s parser; true when it read the input without an error. Seeds
/// named `valid-*` in a corpus must give true (`tests/it/fuzz_corpus_replay.rs`), which shows the
/// scratch layout and the framing reach the parser.
///
/// # Panics
/// On an unknown target name or when the scratch directory cannot be written (the harness's
/// own faults), and wherever the code under test panics (a finding).
pub fn run(target: &str, data: &[u8]) -> bool {
    let dir = Scratch::new();
    let root = dir.path();
    match target {
        "run_json" => read(&[write(root, "runs/run.json", data)]),
        "run_jsonl" => read(&[write(root, "runs/runs.jsonl", data)]),
        "tfevents" => {
            write(root, "tb/events.out.tfevents.1700000000.fuzz", data);
            read(&[root.join("tb")])
        }
        "tfevents_records" => {
            let framed = tfrecords(data);
            write(root, "tb/events.out.tfevents.1700000000.fuzz", &framed);
            read(&[root.join("tb")])
        }
        "wandb_log" => {
            write(root, &format!("{WANDB_RUN_DIR}/{WANDB_LOG}"), data);
            read(&[root.join(WANDB_RUN_DIR)])
        }
        "wandb_records" => {
            let framed = wandb_log(data);
            write(root, &format!("{WANDB_RUN_DIR}/{WANDB_LOG}"), &framed);
            read(&[root.join(WANDB_RUN_DIR)])
        }
        "wandb_config" => {
            write(root, &format!("{WANDB_RUN_DIR}/files/config.yaml"), data);
            let summary = format!("{WANDB_RUN_DIR}/files/wandb-summary.json");
            write(root, &summary, WANDB_SUMMARY.as_bytes());
            read(&[root.join(WANDB_RUN_DIR)])
        }
        "csv" => read(&[write(root, "lightning_logs/version_0/metrics.csv", data)]),
        "lightning_hparams" => {
            write(root, "lightning_logs/version_0/hparams.yaml", data);
            let metrics = LIGHTNING_METRICS.as_bytes();
            read(&[write(root, "lightning_logs/version_0/metrics.csv", metrics)])
        }
        "mlflow_meta" => mlflow(root, data, MLFLOW_METRIC.as_bytes(), None),
        "mlflow_metric" => mlflow(root, MLFLOW_META.as_bytes(), data, None),
        "mlflow_param" => mlflow(
            root,
            MLFLOW_META.as_bytes(),
            MLFLOW_METRIC.as_bytes(),
            Some(data),
        ),
        "catalog" => {
            for (path, text) in catalog_files(data) {
                write(root, &path, text);
            }
            load_catalog(root)
        }
        "evidence" => {
            write(root, "SKILL.md", EVIDENCE_SKILL.as_bytes());
            write(root, &format!("evidence/{EVIDENCE_ID}.yaml"), data);
            load_catalog(root)
        }
        "skill_front_matter" => {
            let mut skill = b"---\n".to_vec();
            skill.extend_from_slice(data);
            skill.extend_from_slice(b"\n---\n\n# Skill\n\nBody.\n");
            write(root, "SKILL.md", &skill);
            load_catalog(root)
        }
        "search_query" => query(data),
        "memory_config" => memory_config(data),
        "text_log" => doctor::text_log(root, data),
        "watch" => doctor::watch(root, data),
        "run_trace" => doctor::run_trace(root, data),
        other => panic!("unknown fuzz target {other:?}; the targets are {TARGETS:?}"),
    }
}

/// Reads runs as `sweep-compare` does; an error is a fine answer.
fn read(paths: &[PathBuf]) -> bool {
    readers::read_paths(paths).is_ok()
}

/// An MLflow run: `meta.yaml`, `metrics/loss`, and when given `params/seed` and the run-name tag.
fn mlflow(root: &Path, meta: &[u8], metric: &[u8], param: Option<&[u8]>) -> bool {
    let run = root.join(MLFLOW_RUN_DIR);
    write(&run, "meta.yaml", meta);
    write(&run, "metrics/loss", metric);
    if let Some(p) = param {
        write(&run, "params/seed", p);
        write(&run, "params/optimizer/lr", p);
        write(&run, "tags/mlflow.runName", p);
    }
    read(&[run])
}

/// Loads a catalog folder as `--catalog DIR` does, then verifies and indexes it. (Queries are
/// the `search_query` target's: the speller a first query builds costs far more than parsing.)
fn load_catalog(root: &Path) -> bool {
    let Ok(c) = catalog::from_dir(root) else {
        return false;
    };
    let _ = verify::verify(&c);
    let _ = search::entry_index(&c);
    let _ = search::symptom_index(&c);
    true
}

/// Reads an HF config.json as `mldebug memory --config` does, then estimates it (the default
/// setup, and LoRA on every linear layer) and fits it to every GPU, so the arithmetic of any
/// shape the reader accepts is exercised too. The CLI reads the file as UTF-8.
fn memory_config(data: &[u8]) -> bool {
    use mldebug_memory::setup::{Method, Setup, Targets};
    use mldebug_memory::{config, estimate::estimate, fit};
    let Ok(text) = std::str::from_utf8(data) else {
        return false;
    };
    let Ok(shape) = config::parse(Path::new("config.json"), text) else {
        return false;
    };
    let lora = Setup {
        method: Method::Lora,
        lora_targets: Targets::AllLinear,
        ..Setup::default()
    };
    for setup in [Setup::default(), lora] {
        if let Ok(e) = estimate(&shape, &setup) {
            let _ = fit::targets(&shape, &setup, &e, &fit::GPUS[..1], fit::DEFAULT_HEADROOM);
            let _ = fit::levers(&shape, &setup, &e);
        }
    }
    true
}

/// Searches the embedded catalog as `search` and `triage` do, the query being the input's text
/// (the CLI's arguments are UTF-8; clap refuses others).
fn query(data: &[u8]) -> bool {
    static INDEXES: OnceLock<(search::Index, search::Index)> = OnceLock::new();
    let Ok(q) = std::str::from_utf8(data) else {
        return false;
    };
    if search::check_query_length(q).is_err() {
        return false;
    }
    let (entries, symptoms) = INDEXES.get_or_init(|| {
        let c = catalog::embedded();
        (search::entry_index(c), search::symptom_index(c))
    });
    let _ = search::echo(q);
    let _ = symptoms.search(q);
    let _ = entries.search(q);
    true
}

/// The `catalog` target's files: text before the first `%%% <path>` line is SKILL.md. Paths
/// other than the catalog's own (`SKILL.md`, `PLAYBOOK.md`, `refs/<name>.md`,
/// `refs/<name>.tsv`, `evidence/<name>.yaml`, names of ASCII letters, digits, `-` and `_`) drop their file.
fn catalog_files(data: &[u8]) -> Vec<(String, &[u8])> {
    let mut out = Vec::new();
    let mut path = Some(catalog::SKILL_FILE.to_string());
    let mut start = 0;
    let mut at = 0;
    let marker = FILE_MARKER.as_bytes();
    while at < data.len() {
        let end = data[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(data.len(), |i| at + i + 1);
        let line = &data[at..end];
        if let Some(rest) = line.strip_prefix(marker) {
            if let Some(p) = path.take() {
                out.push((p, &data[start..at]));
            }
            path = std::str::from_utf8(rest)
                .ok()
                .map(str::trim_end)
                .filter(|p| is_catalog_path(p))
                .map(str::to_string);
            start = end;
        }
        at = end;
    }
    if let Some(p) = path {
        out.push((p, &data[start..]));
    }
    out
}

fn is_catalog_path(p: &str) -> bool {
    let plain = |name: &str| {
        !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    p == catalog::SKILL_FILE
        || p == catalog::PLAYBOOK_FILE
        || catalog::FOLDERS.iter().any(|(folder, ext)| {
            p.strip_prefix(folder)
                .and_then(|n| n.strip_prefix('/'))
                .and_then(|n| n.strip_suffix(ext))
                .and_then(|n| n.strip_suffix('.'))
                .is_some_and(plain)
        })
}

/// The pieces of `data` between [`RECORD_SEPARATOR`]s.
fn records(data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    while let Some(i) = rest
        .windows(RECORD_SEPARATOR.len())
        .position(|w| w == RECORD_SEPARATOR)
    {
        out.push(&rest[..i]);
        rest = &rest[i + RECORD_SEPARATOR.len()..];
    }
    out.push(rest);
    out
}

/// Each record of `data` as a TFRecord with valid length and data checksums.
fn tfrecords(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 64);
    for r in records(data) {
        let len = (r.len() as u64).to_le_bytes();
        out.extend_from_slice(&len);
        out.extend_from_slice(&masked_crc32c(&len).to_le_bytes());
        out.extend_from_slice(r);
        out.extend_from_slice(&masked_crc32c(r).to_le_bytes());
    }
    out
}

/// Each record of `data` in a W&B run log: the file header, then LevelDB-log blocks with valid
/// checksums, a record split across blocks where it does not fit (first, middle, last parts).
fn wandb_log(data: &[u8]) -> Vec<u8> {
    let mut out = WANDB_HEADER.to_vec();
    for r in records(data) {
        let mut rest = r;
        let mut first = true;
        loop {
            let left = WANDB_BLOCK - out.len() % WANDB_BLOCK;
            if left < WANDB_RECORD_HEADER {
                out.resize(out.len() + left, 0);
                continue;
            }
            let n = rest.len().min(left - WANDB_RECORD_HEADER);
            let last = n == rest.len();
            let kind: u8 = match (first, last) {
                (true, true) => 1,
                (true, false) => 2,
                (false, false) => 3,
                (false, true) => 4,
            };
            let crc = crc32_update(crc32_update(0, &[kind]), &rest[..n]);
            out.extend_from_slice(&crc.to_le_bytes());
            out.extend_from_slice(&(n as u16).to_le_bytes());
            out.push(kind);
            out.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            first = false;
            if last {
                break;
            }
        }
    }
    out
}

/// Writes `bytes` to `dir/rel`, creating folders.
fn write(dir: &Path, rel: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(rel);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent)
            .unwrap_or_else(|e| panic!("fuzz scratch {}: {e}", parent.display()));
    }
    std::fs::write(&p, bytes).unwrap_or_else(|e| panic!("fuzz scratch {}: {e}", p.display()));
    p
}

/// A fresh directory for one input, removed afterwards.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Self {
        static BASE: OnceLock<PathBuf> = OnceLock::new();
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let base = BASE.get_or_init(|| {
            let shm = Path::new("/dev/shm");
            let probe = shm.join(format!("mldebug-fuzz-probe-{}", std::process::id()));
            if std::fs::create_dir_all(&probe).is_ok() && std::fs::remove_dir(&probe).is_ok() {
                shm.to_path_buf()
            } else {
                std::env::temp_dir()
            }
        });
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("mldebug-fuzz-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("fuzz scratch {}: {e}", dir.display()));
        Scratch(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_input_splits_at_markers_and_drops_foreign_paths() {
        let input = b"skill\n%%% PLAYBOOK.md\nplay\n%%% ../x.md\nlost\n%%% refs/a_b-1.md\nref\n%%% evidence/s.yaml\nid: s\n%%% refs/.md\nlost too\n%%% refs/p.tsv\nloss-nan\tx\tnan\n%%% refs/p.yaml\nlost";
        let files = catalog_files(input);
        let got: Vec<(&str, &[u8])> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
        assert_eq!(
            got,
            [
                ("SKILL.md", &b"skill\n"[..]),
                ("PLAYBOOK.md", b"play\n"),
                ("refs/a_b-1.md", b"ref\n"),
                ("evidence/s.yaml", b"id: s\n"),
                ("refs/p.tsv", b"loss-nan\tx\tnan\n"),
            ]
        );
    }

    #[test]
    fn records_split_at_the_separator() {
        assert_eq!(records(b"a--record--bc--record--"), [&b"a"[..], b"bc", b""]);
        assert_eq!(records(b""), [&b""[..]]);
    }

    #[test]
    fn a_record_longer_than_a_block_is_split_into_parts() {
        let big = vec![7u8; WANDB_BLOCK + 100];
        let log = wandb_log(&big);
        assert!(log.starts_with(WANDB_HEADER));
        // The first part fills block 0 (after the file header); the last part opens block 1.
        assert_eq!(log[WANDB_HEADER.len() + 6], 2);
        assert_eq!(log[WANDB_BLOCK + 6], 4);
        assert_eq!(
            log.len(),
            WANDB_BLOCK + 2 * WANDB_RECORD_HEADER + 100 + WANDB_HEADER.len()
        );
    }
}
