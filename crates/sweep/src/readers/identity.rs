//! Who a run is: its seed, task and arm, taken from the record itself or from the names of the
//! files and directories around it; and configuration flattened to dotted keys.

use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// Config keys that hold the seed, in the order they are tried.
pub const SEED_KEYS: [&str; 2] = ["seed", "random_seed"];

/// Keys that name the task, in the order they are tried (top level first, then config).
pub const TASK_KEYS: [&str; 3] = ["task", "env", "dataset"];

/// How many directory levels are searched for a seed pattern: the run's own directory and two
/// above it (`seed_2/version_0/metrics.csv`), never above the directory the user named.
const SEED_DIR_LEVELS: usize = 3;

/// Flattens nested objects into `prefix.key` entries; arrays and scalars are kept as they are.
pub fn flatten_into(prefix: &str, value: Value, out: &mut BTreeMap<String, Value>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let key = if prefix.is_empty() {
                    k
                } else {
                    format!("{prefix}.{k}")
                };
                flatten_into(&key, v, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other);
        }
    }
}

/// Flattens a JSON object into dotted keys.
pub fn flatten(map: Map<String, Value>) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for (k, v) in map {
        flatten_into(&k, v, &mut out);
    }
    out
}

/// A scalar JSON value written as a name: strings as they are, integral numbers without `.0`.
pub fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => n.to_string(),
        }),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The seed named in a flattened config (`seed`, then `random_seed`).
pub fn seed_from_config(config: &BTreeMap<String, Value>) -> Option<String> {
    SEED_KEYS
        .iter()
        .find_map(|k| config.get(*k).and_then(scalar_text))
}

/// The task named in a flattened config (`task`, `env`, `dataset`).
pub fn task_from_config(config: &BTreeMap<String, Value>) -> Option<String> {
    TASK_KEYS
        .iter()
        .find_map(|k| config.get(*k).and_then(scalar_text))
}

/// A seed written into a name: `seed3`, `seed_3`, `seed-3`, `seed=3`, `s3`, `s_3`; the pattern
/// must stand alone between non-alphanumeric characters (so `steps100` and `runs3` do not match).
pub fn seed_from_name(name: &str) -> Option<String> {
    let b = name.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let at_boundary = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        if at_boundary {
            let rest = &b[i..];
            let prefix = if rest.len() >= 4 && rest[..4].eq_ignore_ascii_case(b"seed") {
                4
            } else if rest.first().is_some_and(|c| c.eq_ignore_ascii_case(&b's')) {
                1
            } else {
                0
            };
            if prefix > 0 {
                let mut j = i + prefix;
                if j < b.len() && matches!(b[j], b'_' | b'-' | b'=') {
                    j += 1;
                }
                let start = j;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                let ends_clean = j == b.len() || !b[j].is_ascii_alphanumeric();
                if j > start && ends_clean {
                    return Some(name[start..j].to_string());
                }
            }
        }
        i += 1;
    }
    None
}

/// The seed written into the file name or into one of the directories just above it (see
/// [`seed_from_dirs`]).
pub fn seed_from_path(path: &Path, root: Option<&Path>) -> Option<String> {
    let stem = path.file_stem().and_then(|s| s.to_str());
    stem.and_then(seed_from_name)
        .or_else(|| seed_from_dirs(path.parent()?, root))
}

/// The seed written into the name of `dir` or of a directory above it: up to
/// [`SEED_DIR_LEVELS`] levels, and not above `root`, the directory the user named, when there is
/// one (a `s1` far up a home directory is not this run's seed).
pub fn seed_from_dirs(dir: &Path, root: Option<&Path>) -> Option<String> {
    for d in dir.ancestors().take(SEED_DIR_LEVELS) {
        if let Some(seed) = d
            .file_name()
            .and_then(|s| s.to_str())
            .and_then(seed_from_name)
        {
            return Some(seed);
        }
        if root.is_some_and(|r| r == d) {
            break;
        }
    }
    None
}

/// The last component of a path as text (lossy), for naming runs.
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// The file name without its extension.
pub fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// A run directory's name: relative to the directory the user named when there is one
/// (`lr3e-4/seed1`), else its own name; Lightning's `version_<k>` says little alone, so it keeps
/// the logger name above it (`my_model/version_3`).
pub fn dir_run_name(dir: &Path, root: Option<&Path>) -> String {
    if let Some(rel) = root.and_then(|r| dir.strip_prefix(r).ok()) {
        if !rel.as_os_str().is_empty() {
            return rel.to_string_lossy().into_owned();
        }
    }
    let own = file_name(dir);
    if own.starts_with("version_") {
        if let Some(parent) = dir.parent().and_then(|p| p.file_name()) {
            return format!("{}/{own}", parent.to_string_lossy());
        }
    }
    own
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn seed_patterns_in_names() {
        for (name, seed) in [
            ("seed3", Some("3")),
            ("run_seed_12", Some("12")),
            ("lr3e-4-s7", Some("7")),
            ("S2", Some("2")),
            ("seed=4.json", Some("4")),
            ("steps100", None),
            ("runs3", None),
            ("s3x", None),
            ("seed", None),
            ("version_3", None),
        ] {
            assert_eq!(seed_from_name(name).as_deref(), seed, "{name}");
        }
    }

    #[test]
    fn seed_from_the_directory_above() {
        let p = Path::new("/tmp/sweep/lr0.1/seed_5/version_0/metrics.csv");
        assert_eq!(seed_from_path(p, None).as_deref(), Some("5"));
        let p = Path::new("/seed_9/a/b/c/metrics.csv");
        assert_eq!(seed_from_path(p, None), None, "too far up to be this run's");
        let p = Path::new("/home/s1/runs/version_0/metrics.csv");
        let root = Path::new("/home/s1/runs");
        assert_eq!(
            seed_from_path(p, Some(root)),
            None,
            "above the directory named"
        );
        let root = Path::new("/tmp/sweep/lr0.1/seed_5");
        let p = root.join("metrics.csv");
        assert_eq!(
            seed_from_path(&p, Some(root)).as_deref(),
            Some("5"),
            "the named one counts"
        );
    }

    #[test]
    fn config_seed_and_flattening() {
        let Value::Object(m) =
            json!({"opt": {"lr": 0.1, "betas": [0.9, 0.99]}, "random_seed": 3.0})
        else {
            unreachable!()
        };
        let c = flatten(m);
        assert_eq!(c["opt.lr"], json!(0.1));
        assert_eq!(c["opt.betas"], json!([0.9, 0.99]));
        assert_eq!(seed_from_config(&c).as_deref(), Some("3"));
    }
}
