//! Which runs are arm A and which are arm B, which metric is compared, and which way is better.
//!
//! Arms come from `--group-by KEY` (`group`, or a dotted config key), or are found automatically:
//! the runs' `group` when it takes exactly two values, else the one config key that varies and
//! takes exactly two values. `--a` / `--b` pick two arms when there are more (or fix the order).
//! Without them, a value that reads like a baseline (`baseline`, `control`, …) becomes B;
//! otherwise A is the first in sorted order. The choice is always stated.

use crate::record::RunRecord;
use crate::{Error, Result};
use std::collections::{BTreeMap, BTreeSet};

/// Where a run's arm label comes from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", content = "key", rename_all = "kebab-case")]
pub enum ArmKey {
    /// The run's `group` field.
    Group,
    /// A (dotted) config key.
    Config(String),
}

impl std::fmt::Display for ArmKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArmKey::Group => f.write_str("group"),
            ArmKey::Config(k) => write!(f, "config.{k}"),
        }
    }
}

/// The two arms and how they were chosen.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Arms {
    /// What the runs were split on: a config key, the group, or the paths given.
    pub key: ArmKey,
    /// Arm A's value of the key (the candidate).
    pub a: String,
    /// Arm B's value of the key (the baseline).
    pub b: String,
    /// One sentence: how the key and the order were decided.
    pub how: String,
}

/// Config keys that identify a run rather than configure it: never arms, never confounds.
pub const IGNORABLE_KEYS: &[&str] = &[
    "name",
    "run_name",
    "run_id",
    "id",
    "output_dir",
    "out_dir",
    "logging_dir",
    "save_dir",
    "run_dir",
    "log_dir",
    "timestamp",
    "start_time",
    "end_time",
    "date",
    "time",
    "host",
    "hostname",
    "wandb",
    "mlflow",
    "experiment",
    "experiment_name",
    "notes",
    "tags",
];

/// Config keys that hold a seed, a split or a fold: the pairing key, never an arm.
pub const SEED_KEYS: &[&str] = &[
    "seed",
    "random_seed",
    "rng_seed",
    "data_seed",
    "split",
    "fold",
    "seed_everything",
];

/// Config keys that name a task (the multi-task stratum), never an arm.
pub const TASK_KEYS: &[&str] = &[
    "task",
    "env",
    "env_id",
    "dataset",
    "task_name",
    "dataset_name",
];

/// Arm values that read like the reference arm, which becomes B when no order is given.
const BASELINE_NAMES: &[&str] = &[
    "baseline",
    "base",
    "control",
    "default",
    "reference",
    "ref",
    "main",
    "old",
];

fn leaf(key: &str) -> &str {
    key.rsplit('.').next().unwrap_or(key)
}

/// Whether a config key is bookkeeping (ignored), a seed, or a task: not a candidate arm key.
pub fn is_structural(key: &str) -> bool {
    let l = leaf(key).to_ascii_lowercase();
    key.starts_with('_')
        || l.starts_with('_')
        || key.starts_with("wandb")
        || key.starts_with("mlflow")
        || IGNORABLE_KEYS.contains(&l.as_str())
        || SEED_KEYS.contains(&l.as_str())
        || l.ends_with("seed")
        || TASK_KEYS.contains(&l.as_str())
}

/// A config value as a label: strings bare, everything else as JSON text.
pub fn label(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The arm label of `run` under `key`, if it has one.
pub fn arm_of(run: &RunRecord, key: &ArmKey) -> Option<String> {
    match key {
        ArmKey::Group => run.group.clone(),
        ArmKey::Config(k) => run.config.get(k).map(label),
    }
}

fn key_from_flag(s: &str) -> ArmKey {
    match s {
        "group" | "method" => ArmKey::Group,
        _ => ArmKey::Config(s.strip_prefix("config.").unwrap_or(s).to_string()),
    }
}

fn values(runs: &[RunRecord], key: &ArmKey) -> BTreeSet<String> {
    runs.iter().filter_map(|r| arm_of(r, key)).collect()
}

/// Config keys whose value is not the same in every run (a missing key counts as a value).
pub fn varying_config_keys(runs: &[&RunRecord]) -> BTreeMap<String, BTreeSet<String>> {
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in runs {
        for k in r.config.keys() {
            seen.entry(k.clone()).or_default();
        }
    }
    for (k, vals) in seen.iter_mut() {
        for r in runs {
            vals.insert(
                r.config
                    .get(k)
                    .map(label)
                    .unwrap_or_else(|| "(unset)".into()),
            );
        }
    }
    seen.retain(|_, v| v.len() > 1);
    seen
}

/// Decide the arms. `group_by`, `a` and `b` are the command-line flags.
pub fn choose(
    runs: &[RunRecord],
    group_by: Option<&str>,
    a: Option<&str>,
    b: Option<&str>,
) -> Result<Arms> {
    let (key, how_key) = match group_by {
        Some(g) => {
            let mut key = key_from_flag(g);
            // `method` is read as the group, unless the runs hold it as a config key instead
            // (a W&B runs-table export has a `method` column and no group).
            if g == "method" && values(runs, &key).is_empty() {
                key = ArmKey::Config(g.to_string());
            }
            if values(runs, &key).is_empty() {
                return Err(Error::usage(format!(
                    "--group-by {g}: no run has a value for `{key}`"
                )));
            }
            (key.clone(), format!("by {key} (--group-by)"))
        }
        None => auto_key(runs, a, b)?,
    };
    let vals = values(runs, &key);
    let pick = |name: &str, flag: &str| -> Result<String> {
        if vals.contains(name) {
            Ok(name.to_string())
        } else {
            Err(Error::usage(format!(
                "--{flag} {name}: no run has {key} = {name} (values: {})",
                vals.iter().cloned().collect::<Vec<_>>().join(", ")
            )))
        }
    };
    let others = |x: &str| vals.iter().filter(|v| *v != x).cloned().collect::<Vec<_>>();
    let (arm_a, arm_b, how_order) = match (a, b) {
        (Some(a), Some(b)) => {
            if a == b {
                return Err(Error::usage("--a and --b name the same arm"));
            }
            (pick(a, "a")?, pick(b, "b")?, "A and B as given".to_string())
        }
        (Some(a), None) | (None, Some(a)) => {
            let given = pick(a, if b.is_some() { "b" } else { "a" })?;
            let rest = others(&given);
            if rest.len() != 1 {
                return Err(Error::usage(format!(
                    "{key} has {} values ({}); name both arms with --a and --b",
                    vals.len(),
                    vals.iter().cloned().collect::<Vec<_>>().join(", ")
                )));
            }
            let other = rest[0].clone();
            if b.is_some() {
                (other, given, "B as given".to_string())
            } else {
                (given, other, "A as given".to_string())
            }
        }
        (None, None) => {
            if vals.len() != 2 {
                return Err(Error::usage(format!(
                    "{key} has {} values ({}); name the two arms with --a and --b",
                    vals.len(),
                    vals.iter().cloned().collect::<Vec<_>>().join(", ")
                )));
            }
            let v: Vec<String> = vals.iter().cloned().collect();
            let is_base = |s: &str| BASELINE_NAMES.contains(&s.to_ascii_lowercase().as_str());
            if is_base(&v[0]) && !is_base(&v[1]) {
                (
                    v[1].clone(),
                    v[0].clone(),
                    format!("B = `{}` (reads as the baseline)", v[0]),
                )
            } else if is_base(&v[1]) && !is_base(&v[0]) {
                (
                    v[0].clone(),
                    v[1].clone(),
                    format!("B = `{}` (reads as the baseline)", v[1]),
                )
            } else {
                (
                    v[0].clone(),
                    v[1].clone(),
                    "A first in sorted order; use --a/--b to swap".to_string(),
                )
            }
        }
    };
    Ok(Arms {
        key,
        a: arm_a,
        b: arm_b,
        how: format!("arms {how_key}; {how_order}"),
    })
}

fn auto_key(runs: &[RunRecord], a: Option<&str>, b: Option<&str>) -> Result<(ArmKey, String)> {
    let groups = values(runs, &ArmKey::Group);
    let all_grouped = runs.iter().all(|r| r.group.is_some());
    let wanted: Vec<&str> = [a, b].into_iter().flatten().collect();
    let has_wanted = |vals: &BTreeSet<String>| wanted.iter().all(|w| vals.contains(*w));
    if all_grouped
        && groups.len() >= 2
        && (groups.len() == 2 || (!wanted.is_empty() && has_wanted(&groups)))
    {
        return Ok((ArmKey::Group, "by the runs' group (auto)".to_string()));
    }
    let varying: BTreeMap<String, BTreeSet<String>> =
        varying_config_keys(&runs.iter().collect::<Vec<_>>())
            .into_iter()
            .filter(|(k, _)| !is_structural(k))
            .collect();
    let fitting: Vec<&String> = varying
        .iter()
        .filter(|(_, v)| {
            if wanted.is_empty() {
                v.len() == 2
            } else {
                has_wanted(v)
            }
        })
        .map(|(k, _)| k)
        .collect();
    if varying.len() == 1 && fitting.len() == 1 || (!wanted.is_empty() && fitting.len() == 1) {
        let k = fitting[0].clone();
        return Ok((
            ArmKey::Config(k.clone()),
            format!("by config.{k}, the one config key that varies (auto)"),
        ));
    }
    let listing = if varying.is_empty() {
        "no config key varies".to_string()
    } else {
        format!(
            "config keys that vary: {}",
            varying
                .iter()
                .map(|(k, v)| format!("{k} ({} values)", v.len()))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Err(Error::usage(format!(
        "cannot tell the arms apart automatically ({} groups; {listing}); pass --group-by KEY",
        groups.len()
    )))
}

/// Which way the metric improves, and how that was decided.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Direction {
    /// A higher value is better.
    pub higher_is_better: bool,
    /// "given" or the inference in words.
    pub how: String,
}

/// Name fragments that mark a metric where lower is better.
const LOWER_IS_BETTER: &[&str] = &[
    "loss",
    "error",
    "err",
    "ppl",
    "perplexity",
    "wer",
    "cer",
    "mse",
    "mae",
    "rmse",
    "regret",
];

/// Decide the direction from the flags, else from the metric's name.
pub fn direction(metric: &str, higher: bool, lower: bool) -> Direction {
    if higher || lower {
        return Direction {
            higher_is_better: higher,
            how: "given".to_string(),
        };
    }
    let lower_name = metric.to_ascii_lowercase();
    let words: Vec<&str> = lower_name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .collect();
    // Whole words, or longer fragments at a word's edge (`valloss`), so `answer` is not `wer`.
    let hit = |w: &&&str| {
        let w: &str = w;
        words
            .iter()
            .any(|word| *word == w || (w.len() >= 4 && (word.starts_with(w) || word.ends_with(w))))
    };
    match LOWER_IS_BETTER.iter().find(hit) {
        Some(w) => Direction {
            higher_is_better: false,
            how: format!("inferred: the name contains `{w}`; pass --higher-is-better if not"),
        },
        None => Direction {
            higher_is_better: true,
            how: "inferred: the name has no loss/error/ppl/wer; pass --lower-is-better if not"
                .to_string(),
        },
    }
}

/// The metric to compare: the one given, else the only metric every run logs.
pub fn choose_metric(runs: &[&RunRecord], given: Option<&str>) -> Result<String> {
    if let Some(m) = given {
        return Ok(m.to_string());
    }
    let mut common: Option<BTreeSet<String>> = None;
    for r in runs {
        let mine: BTreeSet<String> = r.metrics.keys().chain(r.history.keys()).cloned().collect();
        common = Some(match common {
            None => mine,
            Some(c) => c.intersection(&mine).cloned().collect(),
        });
    }
    let common = common.unwrap_or_default();
    let user_facing: Vec<&String> = common
        .iter()
        .filter(|m| {
            !m.starts_with('_')
                && !matches!(
                    m.as_str(),
                    "step" | "epoch" | "global_step" | "runtime" | "timestamp"
                )
        })
        .collect();
    match user_facing.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(Error::usage("the runs share no metric; pass --metric NAME")),
        many => Err(Error::usage(format!(
            "the runs share {} metrics ({}); pick one with --metric NAME",
            many.len(),
            many.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}
