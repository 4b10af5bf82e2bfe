//! The run record: what every reader produces, whatever the input format.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// One training run: its identity, its configuration and its logged metrics.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunRecord {
    /// A name a person recognises (the run's name, id, or file stem).
    pub name: String,
    /// The arm this run belongs to when the input says so directly (our `group` field, W&B
    /// `group`, a `method` key); otherwise arms come from a config key (`--group-by`).
    pub group: Option<String>,
    /// The seed, as written (ints and strings both occur); the pairing key.
    pub seed: Option<String>,
    /// A task / env / dataset name for multi-task comparisons.
    pub task: Option<String>,
    /// The run's configuration, flattened to dotted keys (`optimizer.lr` → `"3e-4"` as JSON value).
    pub config: BTreeMap<String, serde_json::Value>,
    /// Summary (final) values per metric: the run's own summary where the format has one (our
    /// `metrics`, W&B summary, MLflow's latest value), else the value at the last logged step.
    /// Non-finite values (a diverged run) are kept as NaN / ±inf.
    pub metrics: BTreeMap<String, f64>,
    /// Per-metric history as (step, value), in step order (points at the same step keep the order
    /// they were logged in).
    pub history: BTreeMap<String, Vec<(f64, f64)>>,
    /// Where the run was read from: its file, or its directory for formats that spread a run
    /// over several files (an MLflow run, a W&B run, TensorBoard event files of one run).
    pub source: PathBuf,
    /// The place inside `source` ("line 3", "run abc123"), empty when the file holds one run.
    pub place: String,
}
