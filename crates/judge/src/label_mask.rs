//! `label-mask`: are ignored targets (`-100`) really ignored, and are the labels what they claim?
//!
//! - the share of targets that are `-100`; every target masked means nothing is learned;
//! - the model's loss with **every** target masked must be exactly 0 with all-zero gradients
//!   (PyTorch's mean gives NaN there, 0/0: flagged as a warning);
//! - changing the logits at masked positions must not move the loss (else the mask is ignored);
//! - a loss that errors on `-100` (candle's `cross_entropy` has no ignore index) fails, when
//!   it scores the batch's own targets (a loss that raises on those is an error of the user's
//!   code: the measurement never reaches this judgement);
//! - targets that are neither `-100` nor a class id in `[0, classes)` fail: no class of the
//!   model is what they name, so no loss can score them;
//! - causal LMs: labels not shifted by one (targets equal to the inputs), or, for a model that
//!   shifts its labels itself (every Hugging Face causal LM), labels shifted twice (targets equal
//!   to the next input); and padding trained on (a run of the same token ending several rows
//!   whose targets are not `-100`).

use crate::common::{rank, skipped, Ctx};
use mldebug_report::non_finite;
use mldebug_report::{CheckId, Finding, Status, Subject, Task, IGNORE_INDEX};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

const ID: CheckId = CheckId::LabelMask;

/// Targets equal to the inputs at more than this share of positions: the labels were not
/// shifted. Shifted random tokens coincide with probability 1/V (zoo `tiny-gpt`, V = 32: ~3%).
pub const UNSHIFTED_SHARE: f64 = 0.5;
/// More than this share of targets masked (but not all) warns: little left to learn from.
/// The zoo's padded LM batch masks 16%; prompt-masked fine-tuning data often masks 50–80%.
pub const MASKED_WARN_SHARE: f64 = 0.9;
/// A trailing run of at least this many equal input tokens, in at least two rows, is padding.
pub const PAD_RUN_MIN: usize = 2;
/// The loss may move this much (relative) when masked logits change: float noise, not a leak
/// (the zoo's losses move by exactly 0).
pub const MASK_LEAK_TOLERANCE: f64 = 1e-5;
/// Standard deviation of the noise added to the logits at masked positions: large next to
/// logits at init (std 0.3 on the zoo), so a loss that reads them moves visibly.
pub const PERTURBATION_SCALE: f64 = 10.0;

/// Where the labels of a causal LM stand relative to its inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Labels {
    /// The batch's targets are already the next tokens (the candle convention).
    #[default]
    Shifted,
    /// The model shifts the labels itself: targets equal the inputs (Hugging Face).
    InModel,
}

/// The loss with every target set to `-100`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AllMasked {
    /// The loss was computed.
    Loss {
        /// Its value (0 for a loss that ignores every target).
        #[serde(with = "non_finite::number")]
        loss: f64,
        /// Some parameter got a finite, non-zero gradient from it.
        grads_move: bool,
    },
    /// The loss raised.
    Error {
        /// Its first line.
        error: String,
    },
}

/// The loss on probe targets before and after noise on the logits the probe masks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MaskedLogits {
    /// The loss before the noise.
    #[serde(with = "non_finite::number")]
    pub before: f64,
    /// The loss after it (equal when the masked logits are really ignored).
    #[serde(with = "non_finite::number")]
    pub after: f64,
}

/// What the label-mask probes saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Every target, flat.
    pub targets: Vec<i64>,
    /// The inputs, flat, when they are token ids shaped like the targets.
    #[serde(default)]
    pub inputs: Option<Vec<i64>>,
    /// The targets' last dim, when they have two or more dims.
    #[serde(default)]
    pub seq_len: Option<usize>,
    /// Who shifts language-model labels: the caller, or the model itself.
    #[serde(default)]
    pub labels: Labels,
    /// The loss with every target ignored.
    pub all_masked: AllMasked,
    /// The masked-logits probe, when the model has ignored targets to probe.
    #[serde(default)]
    pub masked_logits: Option<MaskedLogits>,
    /// The number of classes (the logits' last dimension), when known.
    #[serde(default)]
    pub classes: Option<usize>,
}

/// One problem found, worst first when sorted.
struct Problem {
    status: Status,
    text: String,
}

impl Problem {
    fn new(status: Status, text: impl Into<String>) -> Problem {
        Problem {
            status,
            text: text.into(),
        }
    }
}

/// The verdict: ignored targets really ignored, and labels shifted exactly once.
pub fn judge(m: &Measurement, ctx: &Ctx) -> Finding {
    if ctx.task == Task::Regression {
        return skipped(
            ID,
            "regression model: targets are values, there is no -100 mask",
        );
    }
    let total = m.targets.len();
    let masked = m.targets.iter().filter(|&&t| t == IGNORE_INDEX).count();
    let share = masked as f64 / total.max(1) as f64;
    let mut problems = Vec::new();
    let mut f = Finding::new(ID, Status::Pass, "")
        .metric("targets", total as f64)
        .metric("masked", masked as f64)
        .metric("masked_share", share);
    f = out_of_range(m, &mut problems, f);
    if total > 0 && masked == total {
        problems.push(Problem::new(
            Status::Fail,
            format!("every one of the {total} targets is -100: the loss has nothing to learn from"),
        ));
    } else if share > MASKED_WARN_SHARE {
        problems.push(Problem::new(
            Status::Warn,
            format!(
                "{:.0}% of targets are -100: little left to learn from",
                100.0 * share
            ),
        ));
    }
    f = all_masked(&m.all_masked, &ctx.subject, &mut problems, f);
    f = masked_logits(m.masked_logits, &mut problems, f);
    if ctx.task == Task::CausalLm {
        f = causal_labels(m, &mut problems, f);
    }
    problems.sort_by_key(|p| std::cmp::Reverse(rank(p.status)));
    let status = problems.first().map_or(Status::Pass, |p| p.status);
    f.status = status;
    f.summary = match problems.first() {
        Some(p) => p.text.clone(),
        None => format!(
            "masking works: {masked} of {total} targets are -100 ({:.0}%); all-masked loss is exactly 0 with zero gradients, masked logits do not move the loss",
            100.0 * share
        ),
    };
    f.details = problems
        .iter()
        .skip(1)
        .map(|p| format!("{}: {}", p.status, p.text))
        .collect();
    f.next = ctx.next_for(ID, status);
    f
}

/// Targets that are neither -100 nor a class id below the class count (negative ones when the
/// count is unknown): the labels name classes the model does not have.
fn out_of_range(m: &Measurement, problems: &mut Vec<Problem>, f: Finding) -> Finding {
    let outside = |t: i64| t != IGNORE_INDEX && (t < 0 || m.classes.is_some_and(|c| t >= c as i64));
    let n = m.targets.iter().filter(|&&t| outside(t)).count();
    let Some(&first) = m.targets.iter().find(|&&t| outside(t)) else {
        return f;
    };
    let range = match m.classes {
        Some(c) => format!("outside [0, {c})"),
        None => "negative".to_string(),
    };
    problems.push(Problem::new(
        Status::Fail,
        format!(
            "{n} of {} targets are {range} and not -100 (the first is {first}): they name no class of the model, so no loss can score them; targets are class ids below the logits' last dimension, or -100",
            m.targets.len()
        ),
    ));
    f.metric("targets_out_of_range", n as f64)
}

/// Probe 1: with every target masked the loss must be exactly 0, with zero gradients.
fn all_masked(
    probe: &AllMasked,
    subject: &Subject,
    problems: &mut Vec<Problem>,
    f: Finding,
) -> Finding {
    match probe {
        AllMasked::Error { error } => {
            let advice = match subject {
                Subject::Candle(_) => {
                    "mask them by hand (candle's cross_entropy has no ignore index)"
                }
                Subject::Torch(_) => {
                    "pass ignore_index=-100 to the loss, or drop the masked positions before it"
                }
            };
            problems.push(Problem::new(
                Status::Fail,
                format!("the loss fails when every target is -100 ({error}); {advice}"),
            ));
            f
        }
        &AllMasked::Loss { loss, grads_move } => {
            if loss.is_nan() {
                problems.push(Problem::new(
                    Status::Warn,
                    "with every target masked the loss is NaN (0/0): guard the mean's denominator",
                ));
            } else if loss != 0.0 || grads_move {
                problems.push(Problem::new(
                    Status::Fail,
                    format!(
                        "the loss ignores the mask: with every target masked it is {loss:.4}{}, not exactly 0",
                        if grads_move { " with non-zero gradients" } else { "" }
                    ),
                ));
            }
            f.metric("loss_all_masked", loss)
        }
    }
}

/// Probe 2: logits at masked positions must not move the loss.
fn masked_logits(probe: Option<MaskedLogits>, problems: &mut Vec<Problem>, f: Finding) -> Finding {
    let Some(MaskedLogits {
        before: a,
        after: b,
    }) = probe
    else {
        return f;
    };
    if !a.is_finite() {
        problems.push(Problem::new(
            Status::Warn,
            format!("the loss is {a} on the model's own outputs, so whether masked logits move it cannot be judged (run nan-trace)"),
        ));
        return f;
    }
    let moved = (a - b).abs();
    // A perturbation that turns the loss NaN counts as moving it.
    let within = moved <= MASK_LEAK_TOLERANCE * a.abs().max(1.0);
    if !within {
        problems.push(Problem::new(
            Status::Fail,
            format!("the loss ignores the mask: changing logits only at masked positions moved it from {a:.4} to {b:.4}"),
        ));
    }
    f.metric("masked_logit_effect", moved)
}

/// Share of the kept positions where `target[k] == input[k + offset]` within a row.
fn share_equal(inputs: &[i64], targets: &[i64], seq_len: usize, offset: usize) -> f64 {
    let mut kept = 0usize;
    let mut same = 0usize;
    for (k, &t) in targets.iter().enumerate() {
        if t == IGNORE_INDEX || k % seq_len + offset >= seq_len {
            continue;
        }
        kept += 1;
        if inputs.get(k + offset) == Some(&t) {
            same += 1;
        }
    }
    same as f64 / kept.max(1) as f64
}

/// Probe 3, causal LMs: labels not shifted (or shifted twice), padding trained on.
fn causal_labels(m: &Measurement, problems: &mut Vec<Problem>, mut f: Finding) -> Finding {
    let Some(inputs) = m.inputs.as_deref().filter(|i| i.len() == m.targets.len()) else {
        return f;
    };
    let seq_len = m.seq_len.unwrap_or(m.targets.len()).max(1);
    let same_share = share_equal(inputs, &m.targets, seq_len, 0);
    f = f.metric("targets_equal_inputs_share", same_share);
    match m.labels {
        Labels::Shifted if same_share > UNSHIFTED_SHARE => problems.push(Problem::new(
            Status::Fail,
            format!(
                "targets equal the inputs at {:.0}% of positions: the labels are not shifted by one, the model learns to copy",
                100.0 * same_share
            ),
        )),
        Labels::InModel => {
            let next_share = share_equal(inputs, &m.targets, seq_len, 1);
            f = f.metric("targets_equal_next_inputs_share", next_share);
            if next_share > UNSHIFTED_SHARE && same_share <= UNSHIFTED_SHARE {
                problems.push(Problem::new(
                    Status::Fail,
                    format!(
                        "labels are shifted twice: they equal the next input at {:.0}% of positions, and this model shifts them again, so it learns to predict two tokens ahead (pass labels = input_ids)",
                        100.0 * next_share
                    ),
                ));
            }
        }
        Labels::Shifted => {}
    }
    if let Some(text) = padding_trained_on(inputs, &m.targets, seq_len) {
        problems.push(Problem::new(Status::Fail, text));
    }
    f
}

/// Padding trained on: a token that ends at least two rows in a run of `PAD_RUN_MIN` or more,
/// whose positions mostly have real targets instead of -100.
pub fn padding_trained_on(inputs: &[i64], targets: &[i64], seq_len: usize) -> Option<String> {
    if seq_len < PAD_RUN_MIN {
        return None;
    }
    // token -> (rows it pads, positions, positions with a real target, the commonest such target)
    let mut runs: HashMap<i64, (usize, usize, usize, HashMap<i64, usize>)> = HashMap::new();
    let rows = inputs.len() / seq_len;
    for r in 0..rows {
        let row = &inputs[r * seq_len..(r + 1) * seq_len];
        let tgt = &targets[r * seq_len..(r + 1) * seq_len];
        let last = row[seq_len - 1];
        let run = row.iter().rev().take_while(|&&t| t == last).count();
        if run < PAD_RUN_MIN || run == seq_len {
            continue;
        }
        let e = runs.entry(last).or_default();
        e.0 += 1;
        for &t in &tgt[seq_len - run..] {
            e.1 += 1;
            if t != IGNORE_INDEX {
                e.2 += 1;
                *e.3.entry(t).or_default() += 1;
            }
        }
    }
    let (token, (n_rows, positions, trained, values)) = runs
        .into_iter()
        .filter(|(_, e)| e.0 >= 2 && e.2 * 2 > e.1)
        .max_by_key(|(t, e)| (e.2, std::cmp::Reverse(*t)))?;
    let common = values
        .into_iter()
        .max_by_key(|&(v, n)| (n, std::cmp::Reverse(v)))
        .map(|(v, _)| v)?;
    Some(format!(
        "padding is trained on: token {token} ends {n_rows} of {rows} rows ({positions} positions) and {trained} of its targets are real (mostly {common}), not -100"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::test_ctx;

    #[test]
    fn padding_with_real_targets_is_found_and_masked_padding_is_not() {
        // Two rows of 5 tokens, padded with 0 at the end.
        let inputs = [5, 6, 7, 0, 0, 8, 9, 0, 0, 0];
        let bad = [6, 7, 0, 0, 0, 9, 0, 0, 0, 0];
        let good = [6, 7, -100, -100, -100, 9, -100, -100, -100, -100];
        let msg = padding_trained_on(&inputs, &bad, 5).expect("padding found");
        assert!(msg.contains("token 0 ends 2 of 2 rows"), "{msg}");
        assert!(padding_trained_on(&inputs, &good, 5).is_none());
    }

    #[test]
    fn random_rows_are_not_padding() {
        let inputs = [1, 2, 3, 4, 4, 5, 6, 7, 8, 9];
        let targets = [2, 3, 4, 4, 9, 6, 7, 8, 9, 1];
        assert!(padding_trained_on(&inputs, &targets, 5).is_none());
    }

    fn lm(inputs: Vec<i64>, targets: Vec<i64>, labels: Labels) -> Finding {
        let m = Measurement {
            targets,
            inputs: Some(inputs),
            seq_len: Some(4),
            labels,
            all_masked: AllMasked::Loss {
                loss: 0.0,
                grads_move: false,
            },
            masked_logits: Some(MaskedLogits {
                before: 3.0,
                after: 3.0,
            }),
            classes: None,
        };
        judge(&m, &test_ctx(Task::CausalLm))
    }

    #[test]
    fn each_label_convention_has_its_own_wrong_shift() {
        let inputs = vec![1, 2, 3, 4, 5, 6, 7, 8];
        let next = vec![2, 3, 4, -100, 6, 7, 8, -100];
        // Candle convention: targets are the next tokens.
        assert_eq!(
            lm(inputs.clone(), next.clone(), Labels::Shifted).status,
            Status::Pass
        );
        let unshifted = lm(inputs.clone(), inputs.clone(), Labels::Shifted);
        assert_eq!(unshifted.status, Status::Fail);
        assert!(
            unshifted.summary.contains("not shifted"),
            "{}",
            unshifted.summary
        );
        // Hugging Face: labels equal the inputs; pre-shifted labels get shifted twice.
        assert_eq!(
            lm(inputs.clone(), inputs.clone(), Labels::InModel).status,
            Status::Pass
        );
        let twice = lm(inputs, next, Labels::InModel);
        assert_eq!(twice.status, Status::Fail);
        assert!(twice.summary.contains("shifted twice"), "{}", twice.summary);
    }

    #[test]
    fn the_loss_probes() {
        let base = |all: AllMasked, logits: Option<MaskedLogits>| {
            judge(
                &Measurement {
                    targets: vec![1, -100, 2, 0],
                    inputs: None,
                    seq_len: None,
                    labels: Labels::Shifted,
                    all_masked: all,
                    masked_logits: logits,
                    classes: Some(3),
                },
                &test_ctx(Task::Classification),
            )
        };
        let ok = AllMasked::Loss {
            loss: 0.0,
            grads_move: false,
        };
        let same = Some(MaskedLogits {
            before: 1.0,
            after: 1.0,
        });
        assert_eq!(base(ok.clone(), same).status, Status::Pass);
        let nan = AllMasked::Loss {
            loss: f64::NAN,
            grads_move: false,
        };
        assert_eq!(base(nan, same).status, Status::Warn);
        let err = AllMasked::Error {
            error: "index -100 out of range".into(),
        };
        assert_eq!(base(err, same).status, Status::Fail);
        let moved = Some(MaskedLogits {
            before: 1.0,
            after: 1.5,
        });
        assert_eq!(base(ok, moved).status, Status::Fail);
        // Every target past the classes (a batch of another label set): never a pass.
        let outside = judge(
            &Measurement {
                targets: vec![5, 7, -100, 9],
                inputs: None,
                seq_len: None,
                labels: Labels::Shifted,
                all_masked: AllMasked::Loss {
                    loss: 0.0,
                    grads_move: false,
                },
                masked_logits: None,
                classes: Some(4),
            },
            &test_ctx(Task::Classification),
        );
        assert_eq!(outside.status, Status::Fail);
        assert!(
            outside
                .summary
                .contains("3 of 4 targets are outside [0, 4)"),
            "{}",
            outside.summary
        );
        let j = r#"{"targets":[1],"all_masked":{"error":"boom"}}"#;
        let m: Measurement = serde_json::from_str(j).unwrap();
        assert!(matches!(m.all_masked, AllMasked::Error { .. }));
    }
}
