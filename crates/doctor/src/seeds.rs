//! Runs that share a configuration except their seed should fail the same way. When a symptom
//! shows in some seeds and not in others, the cause depends on the seed (an unlucky init, a bad
//! batch that only some data orders reach), which is worth saying next to the findings.

use crate::finding::{Finding, Severity, Symptom};
use crate::names::{RUN_SPECIFIC_KEYS, SEED_KEYS};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One run's identity and findings.
pub struct RunFindings<'a> {
    /// The run's name.
    pub name: &'a str,
    /// Its seed, when the run says.
    pub seed: Option<&'a str>,
    /// Its flattened configuration.
    pub config: &'a BTreeMap<String, String>,
    /// What was found in it.
    pub findings: &'a [Finding],
}

/// A symptom found in some seeds of a configuration and not in others.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeedDifference {
    /// The symptom.
    pub symptom: Symptom,
    /// Runs (by name) that show it at `warn` or worse.
    pub present: Vec<String>,
    /// Runs of the same configuration that do not.
    pub absent: Vec<String>,
}

/// Whether a config key is left out when comparing configurations.
fn ignored(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key);
    SEED_KEYS.contains(&last) || RUN_SPECIFIC_KEYS.contains(&last)
}

/// The symptoms that differ between seeds of one configuration, for every configuration that
/// has at least two seeded runs.
pub fn differences(runs: &[RunFindings]) -> Vec<SeedDifference> {
    let mut groups: BTreeMap<Vec<(&str, &str)>, Vec<&RunFindings>> = BTreeMap::new();
    for r in runs {
        let key: Vec<(&str, &str)> = r
            .config
            .iter()
            .filter(|(k, _)| !ignored(k))
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        if r.seed.is_some() && !key.is_empty() {
            groups.entry(key).or_default().push(r);
        }
    }
    let mut out = Vec::new();
    for members in groups.values().filter(|m| m.len() >= 2) {
        let shown = |r: &RunFindings| -> BTreeSet<Symptom> {
            r.findings
                .iter()
                .filter(|f| f.severity >= Severity::Warn)
                .map(|f| f.symptom)
                .collect()
        };
        let sets: Vec<BTreeSet<Symptom>> = members.iter().map(|r| shown(r)).collect();
        let all: BTreeSet<Symptom> = sets.iter().flatten().copied().collect();
        for symptom in all {
            let (present, absent): (Vec<usize>, Vec<usize>) =
                (0..members.len()).partition(|&i| sets[i].contains(&symptom));
            if absent.is_empty() {
                continue;
            }
            let names =
                |idx: Vec<usize>| idx.iter().map(|&i| members[i].name.to_string()).collect();
            out.push(SeedDifference {
                symptom,
                present: names(present),
                absent: names(absent),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symptom_in_one_seed_of_two_is_a_difference() {
        let config: BTreeMap<String, String> = [
            ("lr".to_string(), "0.1".to_string()),
            ("seed".into(), "1".into()),
        ]
        .into();
        let config2: BTreeMap<String, String> = [
            ("lr".to_string(), "0.1".to_string()),
            ("seed".into(), "2".into()),
        ]
        .into();
        let spike = [Finding::new(
            Symptom::LossSpikes,
            Severity::Warn,
            "loss",
            10.0,
        )];
        let runs = [
            RunFindings {
                name: "a",
                seed: Some("1"),
                config: &config,
                findings: &spike,
            },
            RunFindings {
                name: "b",
                seed: Some("2"),
                config: &config2,
                findings: &[],
            },
        ];
        let d = differences(&runs);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].present, ["a"]);
        assert_eq!(d[0].absent, ["b"]);
        // Another configuration is not compared.
        let other: BTreeMap<String, String> = [("lr".to_string(), "0.2".to_string())].into();
        let runs = [
            RunFindings {
                name: "a",
                seed: Some("1"),
                config: &config,
                findings: &spike,
            },
            RunFindings {
                name: "c",
                seed: Some("2"),
                config: &other,
                findings: &[],
            },
        ];
        assert!(differences(&runs).is_empty());
    }
}
