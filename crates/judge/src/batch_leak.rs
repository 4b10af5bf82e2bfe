//! `batch-leak`: does one sample's output depend on another sample, or on the future?
//!
//! In eval mode, sample `j` of the batch is changed and every other sample's output must stay
//! exactly where it was: any movement means information flows across the batch (a softmax or
//! a normalisation over the batch axis, a reshape that mixes samples). For causal language models
//! the tokens after position `t` are changed too, and the logits at positions `<= t` must not
//! move (a missing or wrong causal mask lets the model read the answer).
//!
//! When a change does not even move the changed sample's own output, the check cannot tell a
//! leak from a model that ignores its input, and says `skipped`, never `pass`.

use crate::common::{skipped, Ctx};
use mldebug_report::non_finite;
use mldebug_report::{CheckId, Finding, Status};
use serde::{Deserialize, Serialize};

const ID: CheckId = CheckId::BatchLeak;

/// An output may move this much, relative to the output's largest magnitude, without counting
/// as a leak: float noise. On CPU the clean zoo moves by exactly 0; GPU kernels may differ in
/// the last bits. The batch-axis softmax twin moves other samples by 1.6e-3–4.8e-3 (absolute).
pub const LEAK_TOLERANCE: f64 = 1e-6;

/// The causal probe: every sample's tokens after position `t` changed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Future {
    /// The last position left unchanged: every later token of the sample was changed.
    pub t: usize,
    /// Largest change of the logits at positions `<= t`.
    #[serde(with = "non_finite::number")]
    pub past: f64,
    /// Largest change of the logits after `t`.
    #[serde(with = "non_finite::number")]
    pub ahead: f64,
}

/// How far outputs moved when the last sample (and, for causal LMs, the future) changed.
/// Changes are the largest `|a - b|`; a side turning NaN or infinite counts as infinitely far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Samples in the batch.
    pub batch: usize,
    /// The output's shape.
    pub output_shape: Vec<usize>,
    /// The unchanged output holds no NaN or infinity.
    pub output_finite: bool,
    /// Every input token id is 0 (no other valid id to change one to).
    #[serde(default)]
    pub ids_all_zero: bool,
    /// The changed sample's own output moved this much.
    #[serde(with = "non_finite::number")]
    pub own: f64,
    /// The other samples' outputs moved this much.
    #[serde(with = "non_finite::number")]
    pub cross: f64,
    /// The largest `|x|` of the changed sample's output before the change.
    #[serde(with = "non_finite::number")]
    pub scale: f64,
    /// The causal probe, for causal language models.
    #[serde(default)]
    pub future: Option<Future>,
}

impl Measurement {
    /// A finding when the probe could not run at all (too small a batch, an output that is
    /// not batch-first or not finite, nothing to change): the measurement code stops there.
    pub fn precondition(&self) -> Option<Finding> {
        let n = self.batch;
        if n < 2 {
            return Some(skipped(
                ID,
                format!(
                    "the batch has {n} sample(s): at least 2 are needed to see one affect another"
                ),
            ));
        }
        if self.output_shape.first() != Some(&n) {
            return Some(skipped(
                ID,
                format!("the output {:?} does not have the batch ({n}) as its first dim: cannot compare samples", self.output_shape),
            ));
        }
        if !self.output_finite {
            return Some(skipped(
                ID,
                "the output is not finite, so changes cannot be measured (run nan-trace)",
            ));
        }
        if self.ids_all_zero {
            return Some(skipped(
                ID,
                "every token id is 0: there is no other valid id to change one to",
            ));
        }
        None
    }
}

/// The verdict: another sample's output or an earlier position moved with the change.
pub fn judge(m: &Measurement, ctx: &Ctx) -> Finding {
    if let Some(f) = m.precondition() {
        return f;
    }
    let j = m.batch - 1;
    let (own, cross) = (m.own, m.cross);
    let tolerance = LEAK_TOLERANCE * m.scale.max(1e-12);
    let mut f = Finding::new(ID, Status::Pass, "")
        .metric("own_change", own)
        .metric("cross_sample_change", cross)
        .metric("tolerance", tolerance);
    if let Some(fu) = m.future {
        f = f
            .metric("past_change", fu.past)
            .metric("future_change", fu.ahead)
            .metric("cut_position", fu.t as f64);
    }
    let future = m.future.map(|fu| (fu.t, fu.past, fu.ahead));
    let (status, summary) = if cross > tolerance {
        (
            Status::Fail,
            format!("samples leak into each other: changing sample {j} moved the other samples' outputs by {cross:.3e} (a softmax or normalisation over the batch axis?)"),
        )
    } else if let Some((t, past, _)) = future.filter(|&(_, past, _)| past > tolerance) {
        (
            Status::Fail,
            format!("future tokens leak: changing tokens after position {t} moved the logits at positions <= {t} by {past:.3e} (causal mask missing or wrong?)"),
        )
    } else if own <= tolerance {
        return skipped(
            ID,
            format!("changing sample {j} did not change its own output: cannot tell a leak from a model that ignores its input"),
        );
    } else if let Some((t, _, _)) = future.filter(|&(_, _, ahead)| ahead <= tolerance) {
        (
            Status::Skipped,
            format!("no cross-sample leak, but changing tokens after position {t} moved no logit at all: the causal part cannot be judged"),
        )
    } else {
        (
            Status::Pass,
            if let Some((t, past, ahead)) = future {
                format!("no leak: changing sample {j} moved the others by {cross:.1e}; changing tokens after position {t} moved earlier logits by {past:.1e} (later ones by {ahead:.2e})")
            } else {
                format!("no leak: changing sample {j} moved its own output by {own:.2e} and the others by {cross:.1e}")
            },
        )
    };
    f.status = status;
    f.summary = summary;
    f.next = ctx.next_for(ID, status);
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::test_ctx;
    use mldebug_report::Task;

    fn m(own: f64, cross: f64, future: Option<Future>) -> Measurement {
        Measurement {
            batch: 4,
            output_shape: vec![4, 8, 16],
            output_finite: true,
            ids_all_zero: false,
            own,
            cross,
            scale: 2.0,
            future,
        }
    }

    #[test]
    fn leaks_across_samples_and_from_the_future() {
        let ctx = test_ctx(Task::CausalLm);
        let clean = Some(Future {
            t: 3,
            past: 0.0,
            ahead: 0.4,
        });
        assert_eq!(judge(&m(0.5, 0.0, clean), &ctx).status, Status::Pass);
        assert_eq!(judge(&m(0.5, 1e-3, clean), &ctx).status, Status::Fail);
        let leak = Some(Future {
            t: 3,
            past: 0.48,
            ahead: 0.4,
        });
        let f = judge(&m(0.5, 0.0, leak), &ctx);
        assert_eq!(f.status, Status::Fail);
        assert!(f.summary.starts_with("future tokens leak"), "{}", f.summary);
        assert_eq!(judge(&m(0.0, 0.0, None), &ctx).status, Status::Skipped);
        let mut one = m(0.5, 0.0, None);
        one.batch = 1;
        assert_eq!(judge(&one, &ctx).status, Status::Skipped);
        let mut nan = m(f64::INFINITY, f64::INFINITY, None);
        nan.output_finite = false;
        assert_eq!(judge(&nan, &ctx).status, Status::Skipped);
    }
}
