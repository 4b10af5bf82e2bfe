//! `label-mask`: are ignored targets (`-100`) really ignored, and are the labels what they claim?
//!
//! - the share of targets that are `-100`; every target masked means nothing is learned;
//! - the model's loss with **every** target masked must be exactly 0 with all-zero gradients
//!   (PyTorch's mean gives NaN there, 0/0: flagged as a warning);
//! - changing the logits at masked positions must not move the loss (else the mask is ignored);
//! - a loss that errors on `-100` (candle's `cross_entropy` has no ignore index) fails;
//! - causal LMs: targets equal to the inputs (labels not shifted by one), and padding trained
//!   on (a run of the same token ending several rows whose targets are not `-100`).
//!
//! On `zoo::tiny-gpt-pad-zero` (padding labelled 0 instead of -100):
//! ```text
//! label-mask  fail  padding is trained on: token 0 ends 5 of 8 rows (21 positions) and 21 of
//!                   its targets are real (mostly 0), not -100
//! ```
//! Read: set the targets of padding positions to -100 when building the batch.

use super::fresh::Fresh;
use super::read::{host_f32, host_i64, loss_value, scalar, stats};
use super::{next_for, skipped};
use crate::model::{Batch, DebugModel, Task, IGNORE_INDEX};
use crate::options::Options;
use crate::report::{CheckId, Finding, Status};
use crate::rng::SeededRng;
use candle_core::{DType, Result, Tensor};
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

/// Runs on fresh parameters of `M` and its batch.
pub fn label_mask<M: DebugModel>(opts: &Options) -> Result<Finding> {
    if M::task() == Task::Regression {
        return Ok(skipped(
            ID,
            "regression model: targets are values, there is no -100 mask",
        ));
    }
    let fresh = Fresh::<M>::new(opts, opts.seed)?;
    run(&fresh.model, &fresh.batch, opts)
}

/// Runs on the caller's model and batch. Only forward and backward passes: parameters are not
/// updated (gradients are computed and dropped).
pub fn label_mask_on<M: DebugModel>(model: &M, batch: &Batch, opts: &Options) -> Result<Finding> {
    if M::task() == Task::Regression {
        return Ok(skipped(
            ID,
            "regression model: targets are values, there is no -100 mask",
        ));
    }
    run(model, batch, opts)
}

/// One problem found, worst first when sorted.
struct Problem {
    status: Status,
    text: String,
}

fn run<M: DebugModel>(model: &M, batch: &Batch, opts: &Options) -> Result<Finding> {
    let targets = host_i64(&batch.targets)?;
    let total = targets.len();
    let masked = targets.iter().filter(|&&t| t == IGNORE_INDEX).count();
    let share = masked as f64 / total.max(1) as f64;
    let mut problems = Vec::new();
    let mut f = Finding::new(ID, Status::Pass, "")
        .metric("targets", total as f64)
        .metric("masked", masked as f64)
        .metric("masked_share", share);

    if total > 0 && masked == total {
        problems.push(Problem {
            status: Status::Fail,
            text: format!(
                "every one of the {total} targets is -100: the loss has nothing to learn from"
            ),
        });
    } else if share > MASKED_WARN_SHARE {
        problems.push(Problem {
            status: Status::Warn,
            text: format!(
                "{:.0}% of targets are -100: little left to learn from",
                100.0 * share
            ),
        });
    }

    let output = model.forward(&batch.input, false)?;
    let shape = batch.targets.dims().to_vec();

    f = all_masked_loss(model, &output, &shape, &mut problems, f)?;
    f = masked_logits(model, &output, &targets, &shape, opts, &mut problems, f)?;
    if M::task() == Task::CausalLm {
        f = causal_labels(batch, &targets, &shape, &mut problems, f)?;
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
    f.next = next_for(ID, status, opts);
    Ok(f)
}

/// Probe 1: with every target masked the loss must be exactly 0, with zero gradients.
fn all_masked_loss<M: DebugModel>(
    model: &M,
    output: &Tensor,
    shape: &[usize],
    problems: &mut Vec<Problem>,
    mut f: Finding,
) -> Result<Finding> {
    let device = output.device().clone();
    let all_masked = Tensor::full(IGNORE_INDEX, shape, &device)?;
    match model.loss(output, &all_masked) {
        Err(e) => problems.push(Problem {
            status: Status::Fail,
            text: format!("the loss fails on -100 targets ({}); mask them by hand (candle's cross_entropy has no ignore index)", first_line(&e)),
        }),
        Ok(loss) => {
            let value = loss_value(&loss)?;
            f = f.metric("loss_all_masked", value);
            let moved = if loss.track_op() { gradient_moves(&loss)? } else { false };
            if value.is_nan() {
                problems.push(Problem {
                    status: Status::Warn,
                    text: "with every target masked the loss is NaN (0/0): guard the mean's denominator".to_string(),
                });
            } else if value != 0.0 || moved {
                problems.push(Problem {
                    status: Status::Fail,
                    text: format!(
                        "the loss ignores the mask: with every target masked it is {value:.4}{}, not exactly 0",
                        if moved { " with non-zero gradients" } else { "" }
                    ),
                });
            }
        }
    }

    Ok(f)
}

/// Probe 2: logits at masked positions must not move the loss.
fn masked_logits<M: DebugModel>(
    model: &M,
    output: &Tensor,
    targets: &[i64],
    shape: &[usize],
    opts: &Options,
    problems: &mut Vec<Problem>,
    mut f: Finding,
) -> Result<Finding> {
    let device = output.device().clone();
    let logits = output.detach();
    if let Some(delta) = perturbation(&logits, targets, opts.seed)? {
        let probe = probe_targets(targets, shape, &device)?;
        if let (Ok(a), Ok(b)) = (
            model.loss(&logits, &probe),
            model.loss(&(&logits + &delta)?, &probe),
        ) {
            let (a, b) = (scalar(&a)?, scalar(&b)?);
            if a.is_finite() {
                let moved = (a - b).abs();
                f = f.metric("masked_logit_effect", moved);
                // A perturbation that turns the loss NaN counts as moving it.
                let within = moved <= MASK_LEAK_TOLERANCE * a.abs().max(1.0);
                if !within {
                    problems.push(Problem {
                        status: Status::Fail,
                        text: format!("the loss ignores the mask: changing logits only at masked positions moved it from {a:.4} to {b:.4}"),
                    });
                }
            } else {
                problems.push(Problem {
                    status: Status::Warn,
                    text: format!("the loss is {a} on the model's own outputs, so whether masked logits move it cannot be judged (run nan-trace)"),
                });
            }
        }
    }

    Ok(f)
}

/// Probe 3, causal LMs: labels not shifted by one, padding trained on.
fn causal_labels(
    batch: &Batch,
    targets: &[i64],
    shape: &[usize],
    problems: &mut Vec<Problem>,
    mut f: Finding,
) -> Result<Finding> {
    if batch.input.dims() == batch.targets.dims() && !batch.input.dtype().is_float() {
        let inputs = host_i64(&batch.input)?;
        let kept: Vec<(i64, i64)> = inputs
            .iter()
            .zip(targets)
            .filter(|(_, &t)| t != IGNORE_INDEX)
            .map(|(&i, &t)| (i, t))
            .collect();
        let same = kept.iter().filter(|(i, t)| i == t).count();
        let same_share = same as f64 / kept.len().max(1) as f64;
        f = f.metric("targets_equal_inputs_share", same_share);
        if same_share > UNSHIFTED_SHARE {
            problems.push(Problem {
                status: Status::Fail,
                text: format!(
                    "targets equal the inputs at {:.0}% of positions: the labels are not shifted by one, the model learns to copy",
                    100.0 * same_share
                ),
            });
        }
        if let Some(text) = padding_trained_on(&inputs, targets, shape[shape.len() - 1]) {
            problems.push(Problem {
                status: Status::Fail,
                text,
            });
        }
    }

    Ok(f)
}

fn rank(s: Status) -> u8 {
    match s {
        Status::Fail => 2,
        Status::Warn => 1,
        _ => 0,
    }
}

fn first_line(e: &candle_core::Error) -> String {
    e.to_string().lines().next().unwrap_or("").to_string()
}

/// True when some parameter gets a gradient that is not all zero (or not finite).
fn gradient_moves(loss: &Tensor) -> Result<bool> {
    let grads = loss.backward()?;
    for node in loss.sorted_nodes() {
        if !node.is_variable() {
            continue;
        }
        if let Some(g) = grads.get(node) {
            let [_, abs_max, non_finite] = stats(g)?;
            if abs_max != 0.0 && non_finite == 0.0 {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Which rows of the logits (flattened over all but the class dim) the probe masks: the batch's
/// own masked positions, or every other position when the batch masks nothing.
fn probe_rows(targets: &[i64]) -> Vec<bool> {
    if targets.contains(&IGNORE_INDEX) && targets.iter().any(|&t| t != IGNORE_INDEX) {
        targets.iter().map(|&t| t == IGNORE_INDEX).collect()
    } else {
        (0..targets.len()).map(|i| i % 2 == 1).collect()
    }
}

fn probe_targets(targets: &[i64], shape: &[usize], device: &candle_core::Device) -> Result<Tensor> {
    let rows = probe_rows(targets);
    let t: Vec<i64> = targets
        .iter()
        .zip(&rows)
        .map(|(&t, &m)| if m { IGNORE_INDEX } else { t })
        .collect();
    Tensor::from_vec(t, shape, device)
}

/// Seeded noise on the logits' rows that the probe masks, zero elsewhere; `None` when the
/// logits do not line up with the targets (one row of logits per target).
fn perturbation(logits: &Tensor, targets: &[i64], seed: u64) -> Result<Option<Tensor>> {
    let classes = logits.dims().last().copied().unwrap_or(1);
    if logits.elem_count() != targets.len() * classes || targets.len() < 2 {
        return Ok(None);
    }
    let rows = probe_rows(targets);
    let mask: Vec<f32> = rows.iter().map(|&m| if m { 1.0 } else { 0.0 }).collect();
    let mask = Tensor::from_vec(mask, (targets.len(), 1), logits.device())?;
    let noise = SeededRng::derive(seed, "label-mask-perturbation")
        .normal_tensor(
            (targets.len(), classes),
            0.0,
            PERTURBATION_SCALE,
            DType::F32,
            &candle_core::Device::Cpu,
        )?
        .to_device(logits.device())?;
    let delta = noise
        .broadcast_mul(&mask)?
        .reshape(logits.dims())?
        .to_dtype(logits.dtype())?;
    // Half precision may round the noise to zero at tiny scales; a zero probe proves nothing.
    if host_f32(&delta)?.iter().all(|&x| x == 0.0) {
        return Ok(None);
    }
    Ok(Some(delta))
}

/// Padding trained on: a token that ends at least two rows in a run of `PAD_RUN_MIN` or more,
/// whose positions mostly have real targets instead of -100.
fn padding_trained_on(inputs: &[i64], targets: &[i64], seq_len: usize) -> Option<String> {
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
        .max_by_key(|(_, e)| e.2)?;
    let common = values.into_iter().max_by_key(|&(_, n)| n).map(|(v, _)| v)?;
    Some(format!(
        "padding is trained on: token {token} ends {n_rows} of {rows} rows ({positions} positions) and {trained} of its targets are real (mostly {common}), not -100"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
