//! Input readers for `sweep-compare`: every format practitioners already have, mapped into
//! [`RunRecord`]s.
//!
//! Paths may be files, directories (walked; each run recognised by its files' shape) or glob
//! patterns. Any malformed input is an error naming the file and the place; a directory with no
//! recognisable run in it is an error too. What each format gives:
//!
//! | input | one run is | name | seed | arm (`group`) | config |
//! |---|---|---|---|---|---|
//! | our `*.json` / `*.jsonl` | a file, an item, a line, or a `run` value | `name`, `run_id`, `id` | `seed`, `config.seed` | `group`, `method` | `config` |
//! | W&B API dump (`*.json`) | an object or list item | `name` | `config.seed` | `group` | `config` |
//! | W&B run dir (`run-…`, `offline-run-…`) | the directory | display name | `seed` in config | run group | `config.yaml`, `.wandb` |
//! | W&B UI CSV export | a row / a column prefix | `Name` / column | `seed` column | `Group` column | the other columns |
//! | HF `trainer_state.json` | the output dir (newest checkpoint if alone) | directory | path | — | top-level numbers |
//! | MLflow `mlruns/`, `mlflow.db` | a run | run name | `seed` param | — | params, `tags.<key>` |
//! | TensorBoard `events.out.tfevents.*` | a directory (splits, restarts merged) | directory | HParams, path | — | HParams, `hparams.yaml` |
//! | Lightning `metrics.csv` | the version dir | `<name>/version_<k>` | `hparams.yaml`, path | — | `hparams.yaml` |
//!
//! "path" means a `seed3`, `seed_3`, `s3` pattern in the file's or its directories' names.
//! Files that could be runs but are not (a model's `config.json` met while walking) are passed
//! over and listed by [`read_paths_detailed`]; named on the command line, they are an error.
//!
//! Files are read in parallel on a few threads; the order of the records is the order of the
//! paths, then of the sorted directory walk, whatever the threads do.
//!
//! A malformed input stops the whole read (exit code 2), named down to the byte or line, e.g.:
//!
//! ```text
//! error: runs/seed1/events.out.tfevents.1700000000.gpu01: record 3 at byte 85: truncated record:
//!   the header announces 29 bytes of data and a 4-byte CRC, but only 24 bytes are left (the file
//!   was cut short, or its writer is still running)
//! error: json/run_s2.json: line 2, column 30: metric "val/acc" is not a number: found the string "0.8"
//! error: csv/version_0/metrics.csv: line 3: non-numeric value "nan?" for key "val_acc", which
//!   holds numbers in other rows
//! ```
//!
//! (one line each; wrapped here). A run that half-reads would skew a comparison without a sign,
//! which is worse than stopping.

mod cells;
mod crc32;
mod crc32c;
mod csv;
mod discover;
mod identity;
mod json;
mod jsonl;
mod lightning_csv;
mod mlflow_files;
mod mlflow_sqlite;
mod protobuf;
mod run_object;
mod series;
mod tables;
mod tfevents;
pub mod walk;
mod wandb_csv;
mod wandb_dir;
mod wandb_log;
mod yaml;

/// The record checksums, for the fuzz targets (in the `mldebug` crate) that frame arbitrary
/// payloads so the decoders behind the checksums are reached.
#[doc(hidden)]
pub use crc32::crc32_update;
#[doc(hidden)]
pub use crc32c::masked_crc32c;
pub use discover::{Job, Source, TRIED};

use crate::record::RunRecord;
use crate::{Error, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Below this many sources, threads cost more than they save.
const MIN_SOURCES_FOR_THREADS: usize = 64;

/// At most this many reader threads: reading is mostly parsing, and the machines this runs on
/// during a sweep are usually busy with something else.
const MAX_THREADS: usize = 4;

/// What one reader found in one source.
#[derive(Debug)]
pub enum Found {
    /// The runs it holds.
    Runs(Vec<RunRecord>),
    /// A file of a candidate type that turned out not to be a run (say, a model's
    /// `config.json` met while walking a directory); the reason says what it was.
    NotARun(String),
}

/// A file met while walking a directory that was not a run, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// The file.
    pub path: PathBuf,
    /// Why it is not a run.
    pub reason: String,
}

/// Everything read: the runs, and the candidate files passed over.
#[derive(Debug, Default)]
pub struct ReadOutcome {
    /// Every run read.
    pub runs: Vec<RunRecord>,
    /// Candidate files that were not runs.
    pub skipped: Vec<Skipped>,
}

/// Reads every run under `paths` (files, directories, glob patterns).
pub fn read_paths(paths: &[PathBuf]) -> Result<Vec<RunRecord>> {
    read_paths_detailed(paths).map(|o| o.runs)
}

/// Like [`read_paths`], also listing the files passed over while walking directories.
pub fn read_paths_detailed(paths: &[PathBuf]) -> Result<ReadOutcome> {
    if paths.is_empty() {
        return Err(Error::usage("no run files given"));
    }
    let expanded = discover::expand(paths)?;
    let (jobs, repeats) = dedupe(discover::discover(&expanded)?);
    let results = read_all(&jobs);
    let mut out = ReadOutcome::default();
    let mut runs_per_origin = vec![0usize; expanded.len()];
    let mut runs_per_job = vec![0usize; jobs.len()];
    let failures = results.iter().filter(|r| r.is_err()).count();
    for (i, (job, result)) in jobs.iter().zip(results).enumerate() {
        let found = result.map_err(|mut e| {
            if failures > 1 {
                e.append(&format!(
                    "\n({} more inputs are malformed; fix this one and run again to see the next)",
                    failures - 1
                ));
            }
            e
        })?;
        match found {
            Found::Runs(runs) => {
                runs_per_origin[job.origin] += runs.len();
                runs_per_job[i] = runs.len();
                out.runs.extend(runs);
            }
            Found::NotARun(reason) if job.root.is_some() => out.skipped.push(Skipped {
                path: job.source.path().to_path_buf(),
                reason,
            }),
            Found::NotARun(reason) => {
                return Err(Error::input(
                    job.source.path(),
                    "format",
                    format_args!("not a run file: {reason}"),
                ))
            }
        }
    }
    for (origin, kept) in repeats {
        runs_per_origin[origin] += runs_per_job[kept];
    }
    for (origin, &n) in runs_per_origin.iter().enumerate() {
        if n == 0 {
            return Err(no_runs_error(&expanded[origin].path, &out.skipped));
        }
    }
    Ok(out)
}

/// Drops sources met twice (`runs/` and `runs/a.json` both on the command line), which would
/// count a run twice. Returns the sources kept, and for each dropped one its command-line path
/// and the index of the source kept in its place.
fn dedupe(jobs: Vec<Job>) -> (Vec<Job>, Vec<(usize, usize)>) {
    let mut seen: HashMap<PathBuf, usize> = HashMap::with_capacity(jobs.len());
    let mut kept: Vec<Job> = Vec::with_capacity(jobs.len());
    let mut repeats = Vec::new();
    for job in jobs {
        match seen.get(job.source.path()) {
            Some(&k) if kept[k].source == job.source => repeats.push((job.origin, k)),
            _ => {
                seen.insert(job.source.path().to_path_buf(), kept.len());
                kept.push(job);
            }
        }
    }
    (kept, repeats)
}

fn no_runs_error(dir: &Path, skipped: &[Skipped]) -> Error {
    let passed_over = skipped
        .iter()
        .filter(|s| s.path.starts_with(dir))
        .take(3)
        .map(|s| format!("\n  {}: {}", s.path.display(), s.reason))
        .collect::<String>();
    let msg = if passed_over.is_empty() {
        format!("no runs found; looked for {TRIED}")
    } else {
        format!("no runs found; looked for {TRIED}; passed over:{passed_over}")
    };
    let what = if dir.is_dir() { "directory" } else { "file" };
    Error::input(dir, what, msg)
}

/// Reads every source, on a few threads when there are many; results in job order.
fn read_all(jobs: &[Job]) -> Vec<Result<Found>> {
    let threads = if jobs.len() < MIN_SOURCES_FOR_THREADS {
        1
    } else {
        mldebug_text::parallel::threads_for(jobs.len(), MAX_THREADS)
    };
    mldebug_text::parallel::map_in_order(jobs, threads, |_, job| read_one(job))
}

/// Reads one source with the reader for its format.
fn read_one(job: &Job) -> Result<Found> {
    let root = job.root.as_deref();
    match &job.source {
        Source::Json(p) => json::read(p, &read_file(p)?, root),
        Source::Jsonl(p) => jsonl::read(p, &read_file(p)?, root),
        Source::Csv(p) => tables::read(p, &read_file(p)?, root),
        Source::TfEvents { dir, parts } => tfevents::read_run(dir, parts, root),
        Source::WandbDir(d) => wandb_dir::read(d, root),
        Source::MlflowRun(d) => mlflow_files::read_run(d),
        Source::MlflowDb(p) => mlflow_sqlite::read(p),
    }
}

/// The whole file, or an error naming it.
pub(crate) fn read_file(p: &Path) -> Result<Vec<u8>> {
    std::fs::read(p).map_err(|e| Error::usage(format!("{}: cannot read: {e}", p.display())))
}
