//! A run's logged series, each with its role, and its configuration as text: the input of the
//! detectors, whichever reader produced it.

use crate::names::{self, Role};
use mldebug_sweep::record::RunRecord;
use std::collections::BTreeMap;

/// One logged series: (step, value) points in step order; non-finite values kept.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The name it was logged under.
    pub name: String,
    /// What it measures.
    pub role: Role,
    /// (step, value) points, in step order.
    pub points: Vec<(f64, f64)>,
}

/// A run's series and configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunHistory {
    /// Every logged series.
    pub series: Vec<Series>,
    /// Flattened configuration (`optimizer.lr` → `0.001`), values as text.
    pub config: BTreeMap<String, String>,
    /// The training loss named first with `--metric`, when given.
    pub primary: Option<String>,
}

impl RunHistory {
    /// Series by name (each sorted by step) with the roles [`names::role`] gives them.
    pub fn new(
        history: BTreeMap<String, Vec<(f64, f64)>>,
        config: BTreeMap<String, String>,
    ) -> RunHistory {
        let series = history
            .into_iter()
            .map(|(name, mut points)| {
                if !points.is_sorted_by(|a, b| a.0 <= b.0) {
                    points.sort_by(|a, b| a.0.total_cmp(&b.0));
                }
                Series {
                    role: names::role(&name),
                    name,
                    points,
                }
            })
            .collect();
        RunHistory {
            series,
            config,
            primary: None,
        }
    }

    /// The history and configuration of a record read by `mldebug-sweep`.
    pub fn from_record(r: &RunRecord) -> RunHistory {
        let config = r
            .config
            .iter()
            .map(|(k, v)| {
                let text = match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), text)
            })
            .collect();
        RunHistory::new(r.history.clone(), config)
    }

    /// The series with this name.
    pub fn get(&self, name: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.name == name)
    }

    /// The series of one role, in name order.
    pub fn of_role(&self, role: Role) -> impl Iterator<Item = &Series> {
        self.series.iter().filter(move |s| s.role == role)
    }

    /// The first series of a role with at least one finite point, preferring the longest.
    pub fn main_of_role(&self, role: Role) -> Option<&Series> {
        self.of_role(role)
            .filter(|s| s.points.iter().any(|p| p.1.is_finite()))
            .max_by_key(|s| (s.points.len(), std::cmp::Reverse(s.name.len())))
    }

    /// The training loss to judge: the objective by name (`loss`, `train_loss`, …) before an
    /// auxiliary term, then the one with the most points.
    pub fn primary_train_loss(&self) -> Option<&Series> {
        if let Some(p) = &self.primary {
            return self.get(p);
        }
        self.of_role(Role::TrainLoss)
            .filter(|s| !s.points.is_empty())
            .min_by_key(|s| {
                (
                    names::train_loss_rank(&s.name),
                    std::cmp::Reverse(s.points.len()),
                )
            })
    }

    /// A config value by key: exactly, or as the last part of a dotted key (`model.lr`).
    pub fn config_text(&self, keys: &[&str]) -> Option<&str> {
        for k in keys {
            if let Some(v) = self.config.get(*k) {
                return Some(v);
            }
        }
        self.config.iter().find_map(|(key, v)| {
            keys.iter()
                .any(|k| key.ends_with(&format!(".{k}")))
                .then_some(v.as_str())
        })
    }

    /// A config value by key, as a number.
    pub fn config_number(&self, keys: &[&str]) -> Option<f64> {
        self.config_text(keys)
            .and_then(|t| t.trim().trim_matches('"').parse::<f64>().ok())
            .filter(|x| x.is_finite())
    }

    /// Forces the roles of the named series: each becomes a loss (a validation loss when its
    /// name says so), and the other losses are no longer judged. Names not present are ignored.
    pub fn with_losses(mut self, metrics: &[String]) -> RunHistory {
        if metrics.is_empty() {
            return self;
        }
        for s in &mut self.series {
            let named = metrics.contains(&s.name);
            let natural = names::role(&s.name);
            s.role = match (named, natural) {
                (true, _) if names::is_eval(&s.name) => Role::EvalLoss,
                (true, _) => Role::TrainLoss,
                (false, Role::TrainLoss | Role::EvalLoss) => Role::Other,
                (false, r) => r,
            };
        }
        // The first named training series is the one judged.
        self.primary = metrics
            .iter()
            .find(|m| self.get(m).is_some_and(|s| s.role == Role::TrainLoss))
            .cloned();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(names: &[(&str, usize)]) -> RunHistory {
        let h = names
            .iter()
            .map(|(n, k)| (n.to_string(), (0..*k).map(|i| (i as f64, 1.0)).collect()))
            .collect();
        RunHistory::new(h, BTreeMap::new())
    }

    #[test]
    fn the_objective_is_the_primary_loss() {
        let r = run(&[("aux_loss", 100), ("loss", 50), ("train_loss", 1)]);
        assert_eq!(r.primary_train_loss().unwrap().name, "loss");
    }

    #[test]
    fn named_metrics_replace_the_losses() {
        let r = run(&[("loss", 10), ("ce", 10), ("val_ce", 5)])
            .with_losses(&["ce".into(), "val_ce".into()]);
        assert_eq!(r.primary_train_loss().unwrap().name, "ce");
        assert_eq!(r.get("loss").unwrap().role, Role::Other);
        assert_eq!(r.get("val_ce").unwrap().role, Role::EvalLoss);
    }

    #[test]
    fn config_keys_match_dotted_suffixes() {
        let mut r = run(&[]);
        r.config.insert("model.lr".into(), "0.001".into());
        assert_eq!(r.config_number(&["lr"]), Some(0.001));
        assert_eq!(r.config_number(&["warmup_steps"]), None);
    }
}
