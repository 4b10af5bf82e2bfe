//! `init-loss`: is the loss at initialisation what a model that knows nothing should score?
//!
//! A freshly initialised classifier should spread its bets, so its cross-entropy should be close
//! to `ln C` (C = classes; for a language model, the vocabulary). Far above means the logits start
//! huge (unnormalised inputs, a bad init, a sum instead of a mean); far below means the loss is
//! not what it claims (its reduction, the targets it reads) or the output bias already fits skewed
//! labels. Not leakage: an untrained network cannot exploit a leak (refs/diagnostics.md).
//! Negative or non-finite means the loss itself is broken.

use crate::common::{skipped, Ctx};
use mldebug_report::non_finite;
use mldebug_report::{CheckId, Finding, Status, Task};
use serde::{Deserialize, Serialize};

const ID: CheckId = CheckId::InitLoss;

/// Fresh inits (and batches) averaged over: one init can be unlucky; three keep the check fast
/// and the verdict stable (zoo: the three losses lie within 10% of each other).
pub const INIT_LOSS_INITS: u64 = 3;
/// |loss / ln C − 1| above this warns (Karpathy's "verify loss @ init", SKILL.md `loss-at-init`). Zoo over
/// 5 seeds: clean models 0.996–1.012, candle's llama (last position only) 1.19–1.40.
pub const INIT_LOSS_WARN_BAND: f64 = 0.2;
/// |loss / ln C − 1| above this fails. Zoo: raw 0–255 pixels 5.1–14x, a summed
/// instead of averaged loss 32x (the batch size), a negated loss −1x.
pub const INIT_LOSS_FAIL_BAND: f64 = 0.5;

/// One forward pass at init: the loss, the number of classes and the logits' spread.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// The loss at initialisation.
    #[serde(with = "non_finite::number")]
    pub loss: f64,
    /// The logits' last dim.
    pub classes: usize,
    /// The standard deviation of the logits at initialisation.
    #[serde(with = "non_finite::number")]
    pub logit_std: f64,
}

/// What was measured: one sample per fresh init, or one for a model as it is now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// One sample per initialisation seed.
    pub samples: Vec<Sample>,
    /// True for one model as it is now (`init_loss_on`), false for fresh inits.
    #[serde(default)]
    pub current_model: bool,
}

/// `ln C`, with a single logit read as a binary classifier (`ln 2`).
fn expected_loss(classes: usize) -> f64 {
    (classes.max(2) as f64).ln()
}

/// A range bound over the losses that turns NaN when any loss is NaN (`f64::min`/`max` would
/// skip it and report ±inf).
fn extreme(samples: &[Sample], pick: fn(f64, f64) -> f64) -> f64 {
    samples
        .iter()
        .map(|s| s.loss)
        .reduce(|a, b| {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                pick(a, b)
            }
        })
        .unwrap_or(f64::NAN)
}

/// The verdict: the mean loss at init against chance (ln of the class count).
pub fn judge(m: &Measurement, ctx: &Ctx) -> Finding {
    if ctx.task == Task::Regression {
        return skipped(
            ID,
            "regression model: there is no ln C to expect at init (only for classification and language models)",
        );
    }
    let samples = &m.samples;
    if samples.is_empty() {
        return skipped(ID, "no forward pass was measured");
    }
    let classes = samples[0].classes;
    let expected = expected_loss(classes);
    let n = samples.len() as f64;
    let mean = samples.iter().map(|s| s.loss).sum::<f64>() / n;
    let (lo, hi) = (extreme(samples, f64::min), extreme(samples, f64::max));
    let logit_std = samples.iter().map(|s| s.logit_std).sum::<f64>() / n;
    let ratio = mean / expected;
    let count = if m.current_model {
        "this model".to_string()
    } else {
        format!("{} inits", samples.len())
    };
    let c_name = if classes >= 2 {
        format!("ln({classes}) = {expected:.3}")
    } else {
        format!("ln(2) = {expected:.3} (one logit)")
    };
    let all_finite = samples.iter().all(|s| s.loss.is_finite());
    let (status, summary) = verdict(mean, ratio, all_finite, &c_name, &count);
    let mut f = Finding::new(ID, status, summary)
        .metric("loss", mean)
        .metric("expected", expected)
        .metric("ratio", ratio)
        .metric("loss_min", lo)
        .metric("loss_max", hi)
        .metric("classes", classes as f64)
        .metric("logit_std", logit_std)
        .metric("inits", n)
        .next(ctx.next_for(ID, status));
    f.details = samples
        .iter()
        .enumerate()
        .map(|(k, s)| format!("init {k}: loss {:.4}, logit std {:.3}", s.loss, s.logit_std))
        .collect();
    f
}

fn verdict(mean: f64, ratio: f64, finite: bool, c_name: &str, count: &str) -> (Status, String) {
    if !finite {
        (
            Status::Fail,
            format!("loss at init is not finite ({mean}) over {count}: an overflow, log(0) or 0/0 in the forward pass or the loss (nan-trace finds where)"),
        )
    } else if mean < 0.0 {
        (
            Status::Fail,
            format!("loss at init is negative ({mean:.3}; expected {c_name}): a cross-entropy cannot be negative, is the sign flipped?"),
        )
    } else if ratio - 1.0 > INIT_LOSS_FAIL_BAND {
        (
            Status::Fail,
            format!("loss at init {mean:.3} is {ratio:.1}x {c_name} ({count}): the logits start far too large (input scale, init, or a sum instead of a mean)"),
        )
    } else if 1.0 - ratio > INIT_LOSS_FAIL_BAND {
        (
            Status::Fail,
            format!("loss at init {mean:.3} is only {ratio:.2}x {c_name} ({count}): suspiciously low: does the loss read its targets and reduce as meant, or is the output bias already fitted to skewed labels? (not leakage: an untrained model cannot exploit a leak)"),
        )
    } else if (ratio - 1.0).abs() > INIT_LOSS_WARN_BAND {
        (
            Status::Warn,
            format!("loss at init {mean:.3} is {ratio:.2}x {c_name} ({count}): a little off; check the last layer's init scale"),
        )
    } else {
        (
            Status::Pass,
            format!("loss at init {mean:.3} is close to {c_name} ({count}, ratio {ratio:.2})"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::test_ctx;

    fn m(losses: &[f64], classes: usize) -> Measurement {
        Measurement {
            samples: losses
                .iter()
                .map(|&loss| Sample {
                    loss,
                    classes,
                    logit_std: 0.1,
                })
                .collect(),
            current_model: false,
        }
    }

    #[test]
    fn bands_around_ln_c() {
        let ctx = test_ctx(Task::Classification);
        let ln4 = 4f64.ln();
        assert_eq!(judge(&m(&[ln4; 3], 4), &ctx).status, Status::Pass);
        assert_eq!(judge(&m(&[ln4 * 1.3; 3], 4), &ctx).status, Status::Warn);
        assert_eq!(judge(&m(&[ln4 * 13.0; 3], 4), &ctx).status, Status::Fail);
        assert_eq!(judge(&m(&[ln4 * 0.2; 3], 4), &ctx).status, Status::Fail);
        assert_eq!(judge(&m(&[-ln4; 3], 4), &ctx).status, Status::Fail);
        let nan = judge(&m(&[ln4, f64::NAN, ln4], 4), &ctx);
        assert_eq!(nan.status, Status::Fail);
        assert!(nan.metrics["loss_min"].is_nan());
    }

    #[test]
    fn regression_is_skipped_and_the_next_command_names_the_subject() {
        assert_eq!(
            judge(&m(&[1.0], 4), &test_ctx(Task::Regression)).status,
            Status::Skipped
        );
        let mut ctx = test_ctx(Task::Classification);
        ctx.subject = mldebug_report::Subject::Torch("model.py:Net".into());
        let f = judge(&m(&[4f64.ln(); 3], 4), &ctx);
        assert_eq!(f.next, "mldebug check class-balance --torch model.py:Net");
    }

    #[test]
    fn reads_the_drivers_json_with_non_finite_strings() {
        let j = r#"{"samples":[{"loss":"NaN","classes":10,"logit_std":0.5}]}"#;
        let m: Measurement = serde_json::from_str(j).unwrap();
        assert!(m.samples[0].loss.is_nan());
        assert!(!m.current_model);
    }
}
