//! Reduce each run to one number: the last value (default), the best value, the mean of the last
//! K values, or the value at a given step.
//!
//! A run that does not log the metric at all is an input error naming its file. A run whose
//! reduced value is NaN or infinite is kept and marked failed by the caller: a method that
//! diverges more often is a finding in itself, never silently dropped.

use crate::record::RunRecord;
use crate::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// Relative tolerance when matching `at-step:N`: steps are integers in every format we read, and
/// this only absorbs float text such as `1000.0000000001`.
const STEP_TOLERANCE: f64 = 1e-9;

/// How a run's metric becomes one number.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Reduction {
    /// The final logged value, or the summary value when there is no history.
    Last,
    /// The best value over the history (optimistic: it selects on the data it reports). A run
    /// whose final value is non-finite has diverged and counts as failed.
    Best,
    /// The mean of the last K logged values (fewer when the run logged fewer).
    MeanLast {
        /// How many.
        k: usize,
    },
    /// The value logged at exactly this step.
    AtStep {
        /// The step.
        step: f64,
    },
}

impl FromStr for Reduction {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}`: expected last, best, mean-last:K or at-step:N");
        match s {
            "last" => Ok(Reduction::Last),
            "best" => Ok(Reduction::Best),
            _ => {
                let (kind, arg) = s.split_once(':').ok_or_else(bad)?;
                match kind {
                    "mean-last" => match arg.parse::<usize>() {
                        Ok(k) if k >= 1 => Ok(Reduction::MeanLast { k }),
                        _ => Err(bad()),
                    },
                    "at-step" => arg
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite())
                        .map(|step| Reduction::AtStep { step })
                        .ok_or_else(bad),
                    _ => Err(bad()),
                }
            }
        }
    }
}

impl fmt::Display for Reduction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reduction::Last => f.write_str("last"),
            Reduction::Best => f.write_str("best"),
            Reduction::MeanLast { k } => write!(f, "mean-last:{k}"),
            Reduction::AtStep { step } => write!(f, "at-step:{step}"),
        }
    }
}

/// One run's reduced value and what it was computed from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reduced {
    /// The run's one number (NaN or infinite: the run failed).
    pub value: f64,
    /// The last logged step of this metric, when the run has a history.
    pub last_step: Option<f64>,
    /// How many logged values the run has for this metric (1 for a summary value only).
    pub points: usize,
}

/// Where inside its file a run is, for error messages.
pub fn place(run: &RunRecord) -> String {
    if run.place.is_empty() {
        format!("run `{}`", run.name)
    } else {
        run.place.clone()
    }
}

/// Reduce `run`'s `metric`; `higher_is_better` matters for [`Reduction::Best`] only.
pub fn reduce(
    run: &RunRecord,
    metric: &str,
    how: Reduction,
    higher_is_better: bool,
) -> Result<Reduced> {
    let history = run.history.get(metric).filter(|h| !h.is_empty());
    let summary = run.metrics.get(metric).copied();
    let Some(history) = history else {
        let Some(value) = summary else {
            let mut have: Vec<&str> = run
                .metrics
                .keys()
                .chain(run.history.keys())
                .map(String::as_str)
                .collect();
            have.sort_unstable();
            have.dedup();
            return Err(Error::input(
                &run.source,
                place(run),
                format!(
                    "no metric `{metric}` (it has: {})",
                    if have.is_empty() {
                        "none".to_string()
                    } else {
                        have.join(", ")
                    }
                ),
            ));
        };
        return match how {
            Reduction::AtStep { step } => Err(Error::input(
                &run.source,
                place(run),
                format!("`at-step:{step}` needs a history of `{metric}`; this run has only a final value"),
            )),
            _ => Ok(Reduced {
                value,
                last_step: None,
                points: 1,
            }),
        };
    };
    let last_step = history.last().map(|p| p.0);
    let points = history.len();
    let value = match how {
        Reduction::Last => history[points - 1].1,
        Reduction::Best => {
            let last = history[points - 1].1;
            if !last.is_finite() {
                last
            } else {
                let finite = history.iter().map(|p| p.1).filter(|v| v.is_finite());
                if higher_is_better {
                    finite.fold(f64::NEG_INFINITY, f64::max)
                } else {
                    finite.fold(f64::INFINITY, f64::min)
                }
            }
        }
        Reduction::MeanLast { k } => {
            let tail = &history[points.saturating_sub(k)..];
            tail.iter().map(|p| p.1).sum::<f64>() / tail.len() as f64
        }
        Reduction::AtStep { step } => {
            let hit = history
                .iter()
                .find(|p| (p.0 - step).abs() <= STEP_TOLERANCE * step.abs().max(1.0));
            match hit {
                Some(p) => p.1,
                None => {
                    return Err(Error::input(
                        &run.source,
                        place(run),
                        format!(
                            "no value of `{metric}` at step {step} (logged steps {} to {})",
                            history[0].0,
                            history[points - 1].0
                        ),
                    ))
                }
            }
        }
    };
    Ok(Reduced {
        value,
        last_step,
        points,
    })
}
