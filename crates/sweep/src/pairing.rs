//! Is the design paired? Runs of A and B that share a seed (or split, or fold) are pairs.
//!
//! Pairing is a property of the design, so it is decided from the runs' metadata, never from the
//! values: the pair key is `--pair-by KEY`, else the run's seed, else the first seed-like config
//! key (`seed`, `random_seed`, `rng_seed`, `data_seed`, `*.seed`, `split`, `fold`) that every run
//! has. Equal key sets pair everything; a partial overlap of at least [`MIN_COMMON_KEYS`] pairs the
//! overlap and lists the runs left out; anything else is analysed unpaired, and says why.

use crate::arms::{label, SEED_KEYS};
use crate::record::RunRecord;
use std::collections::BTreeMap;

/// Fewest shared keys worth pairing on when the arms' key sets only partly overlap.
pub const MIN_COMMON_KEYS: usize = 3;

/// The `--pair-by` / `--no-pair` choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairBy {
    /// Pair by seed when the runs name one.
    Auto,
    /// Pair by this config key.
    Key(String),
    /// Do not pair (`--no-pair`).
    Off,
}

/// The pairing decided for one comparison.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Pairing {
    /// The key pairs share (`seed`, `config.fold`), when paired.
    pub key: Option<String>,
    /// Pairs as (index into A's runs, index into B's runs, shared key value), in key order.
    #[serde(skip)]
    pub pairs: Vec<(usize, usize, String)>,
    /// Runs left without a partner (names).
    pub unmatched: Vec<String>,
    /// One sentence: why paired or why not.
    pub why: String,
    /// The pair key appears twice within an arm (an integrity problem, reported as a warning).
    pub duplicate: bool,
}

/// The value of pair key `key` for `run`: `seed` is the run's seed; anything else a config key.
pub fn key_value(run: &RunRecord, key: &str) -> Option<String> {
    if key == "seed" {
        if let Some(s) = &run.seed {
            return Some(s.clone());
        }
    }
    let k = key.strip_prefix("config.").unwrap_or(key);
    run.config.get(k).map(label)
}

fn candidates(runs: &[&RunRecord]) -> Vec<String> {
    let mut keys = vec!["seed".to_string()];
    for k in SEED_KEYS {
        keys.push(k.to_string());
    }
    let mut dotted: Vec<String> = runs
        .iter()
        .flat_map(|r| r.config.keys())
        .filter(|k| k.ends_with(".seed") || k.ends_with("_seed"))
        .cloned()
        .collect();
    dotted.sort();
    dotted.dedup();
    keys.extend(dotted);
    keys
}

/// Decide the pairing of arm A's runs against arm B's.
pub fn decide(a: &[&RunRecord], b: &[&RunRecord], by: &PairBy) -> Pairing {
    let unpaired = |why: String, duplicate: bool| Pairing {
        key: None,
        pairs: Vec::new(),
        unmatched: Vec::new(),
        why,
        duplicate,
    };
    let key = match by {
        PairBy::Off => return unpaired("--no-pair was given".to_string(), false),
        PairBy::Key(k) => k.clone(),
        PairBy::Auto => {
            let all: Vec<&RunRecord> = a.iter().chain(b).copied().collect();
            match candidates(&all)
                .into_iter()
                .find(|k| all.iter().all(|r| key_value(r, k).is_some()))
            {
                Some(k) => k,
                None => {
                    return unpaired(
                        "no seed (or split/fold) key that every run has".to_string(),
                        false,
                    )
                }
            }
        }
    };
    // Err((why, duplicate)) when this arm cannot be paired on `key`.
    let index =
        |runs: &[&RunRecord], arm: &str| -> Result<BTreeMap<String, usize>, (String, bool)> {
            let mut m = BTreeMap::new();
            for (i, r) in runs.iter().enumerate() {
                let Some(v) = key_value(r, &key) else {
                    return Err((
                        format!("run `{}` in arm {arm} has no `{key}`", r.name),
                        false,
                    ));
                };
                if m.insert(v.clone(), i).is_some() {
                    return Err((format!("{key} {v} appears twice in arm {arm}"), true));
                }
            }
            Ok(m)
        };
    let (ia, ib) = match (index(a, "A"), index(b, "B")) {
        (Ok(x), Ok(y)) => (x, y),
        (Err((why, dup)), _) | (_, Err((why, dup))) => return unpaired(why, dup),
    };
    let pairs: Vec<(usize, usize, String)> = ia
        .iter()
        .filter_map(|(k, &i)| ib.get(k).map(|&j| (i, j, k.clone())))
        .collect();
    let equal = pairs.len() == ia.len() && pairs.len() == ib.len();
    if !equal && pairs.len() < MIN_COMMON_KEYS {
        return unpaired(
            format!(
            "only {} {key} value(s) shared by both arms (need all, or at least {MIN_COMMON_KEYS})",
            pairs.len()
        ),
            false,
        );
    }
    let mut unmatched: Vec<String> = Vec::new();
    for (k, &i) in &ia {
        if !ib.contains_key(k) {
            unmatched.push(a[i].name.clone());
        }
    }
    for (k, &j) in &ib {
        if !ia.contains_key(k) {
            unmatched.push(b[j].name.clone());
        }
    }
    let why = if equal {
        format!(
            "paired by {key}: both arms have the same {} values",
            pairs.len()
        )
    } else {
        format!(
            "paired by {key} on the {} shared values; {} run(s) without a partner left out",
            pairs.len(),
            unmatched.len()
        )
    };
    Pairing {
        key: Some(key),
        pairs,
        unmatched,
        why,
        duplicate: false,
    }
}
