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
//!
//! On `zoo::tiny-gpt-no-causal-mask`:
//! ```text
//! batch-leak  fail  future tokens leak: changing tokens after position 7 moved the logits at
//!                   positions <= 7 by 4.802e-1 (causal mask missing or wrong?)
//! ```
//! Read: position t sees t+1..; check the attention mask's shape, sign and where it is added.

use super::fresh::Fresh;
use super::read::{host_f32, host_i64};
use crate::model::{Batch, DebugModel, Task};
use crate::options::Options;
use crate::report::Finding;
use crate::rng::SeededRng;
use candle_core::{Result, Tensor};
pub use mldebug_judge::batch_leak::LEAK_TOLERANCE;
use mldebug_judge::batch_leak::{judge, Future, Measurement};
use mldebug_report::CheckId;

const ID: CheckId = CheckId::BatchLeak;

/// Runs on fresh parameters of `M` and its batch.
pub fn batch_leak<M: DebugModel>(opts: &Options) -> Result<Finding> {
    let fresh = Fresh::<M>::new(opts, opts.seed)?;
    run(&fresh.model, &fresh.batch, opts)
}

/// Runs on the caller's model (forward passes in eval mode only; nothing is updated).
pub fn batch_leak_on<M: DebugModel>(model: &M, batch: &Batch, opts: &Options) -> Result<Finding> {
    run(model, batch, opts)
}

fn run<M: DebugModel>(model: &M, batch: &Batch, opts: &Options) -> Result<Finding> {
    Ok(judge(&measure(model, batch, opts)?, &opts.ctx(M::task())))
}

fn measure<M: DebugModel>(model: &M, batch: &Batch, opts: &Options) -> Result<Measurement> {
    let input = &batch.input;
    let n = input.dims().first().copied().unwrap_or(0);
    let mut m = Measurement {
        batch: n,
        output_shape: Vec::new(),
        output_finite: true,
        ids_all_zero: false,
        own: 0.0,
        cross: 0.0,
        scale: 0.0,
        future: None,
    };
    if n < 2 {
        return Ok(m);
    }
    let base = model.forward(input, false)?;
    m.output_shape = base.dims().to_vec();
    let [_, _, non_finite] = super::read::stats(&base)?;
    m.output_finite = non_finite == 0.0;
    let causal = M::task() == Task::CausalLm && input.rank() >= 2 && !input.dtype().is_float();
    let modulus = if input.dtype().is_float() {
        1
    } else if causal {
        base.dims().last().copied().unwrap_or(1) as i64
    } else {
        host_i64(input)?.into_iter().max().unwrap_or(0) + 1
    };
    m.ids_all_zero = !input.dtype().is_float() && modulus < 2;
    if m.precondition().is_some() {
        return Ok(m);
    }

    // Across the batch: change the last sample, watch the others.
    let j = n - 1;
    let other = model.forward(&changed(input, &[j], None, modulus, opts.seed)?, false)?;
    (m.own, m.scale) = change(&base.narrow(0, j, 1)?, &other.narrow(0, j, 1)?)?;
    (m.cross, _) = change(&base.narrow(0, 0, j)?, &other.narrow(0, 0, j)?)?;
    opts.report_progress(ID, 1, if causal { 2 } else { 1 }, None);

    // Along time: change every sample's tokens after position t, watch positions <= t.
    if causal {
        let t_len = input.dims()[1];
        if t_len >= 2 && base.rank() >= 3 && base.dims()[1] == t_len {
            let t = t_len / 2 - 1;
            let rows: Vec<usize> = (0..n).collect();
            let later = model.forward(
                &changed(input, &rows, Some(t + 1), modulus, opts.seed)?,
                false,
            )?;
            let (past, _) = change(&base.narrow(1, 0, t + 1)?, &later.narrow(1, 0, t + 1)?)?;
            let (ahead, _) = change(
                &base.narrow(1, t + 1, t_len - t - 1)?,
                &later.narrow(1, t + 1, t_len - t - 1)?,
            )?;
            m.future = Some(Future { t, past, ahead });
        }
        opts.report_progress(ID, 2, 2, None);
    }
    Ok(m)
}

/// How far one element moved: |x - y|, and infinitely far when one side became NaN or infinite
/// (a NaN difference would otherwise be dropped by `max` and read as "did not move").
fn moved_by(x: f32, y: f32) -> f64 {
    let d = f64::from((x - y).abs());
    if d.is_nan() && x != y {
        f64::INFINITY
    } else if d.is_nan() {
        0.0
    } else {
        d
    }
}

/// Largest |a - b| over the elements, and the largest |a|.
fn change(a: &Tensor, b: &Tensor) -> Result<(f64, f64)> {
    let a = host_f32(a)?;
    let b = host_f32(b)?;
    let moved = a
        .iter()
        .zip(&b)
        .map(|(x, y)| moved_by(*x, *y))
        .fold(0.0, f64::max);
    let scale = a.iter().map(|x| f64::from(x.abs())).fold(0.0, f64::max);
    Ok((moved, scale))
}

/// `input` with the rows `rows` (along dim 0) and, within them, the positions `from..` along
/// dim 1 (or everything when `from` is None) changed: token ids shifted by one modulo `modulus`,
/// float values by seeded noise of the input's own scale.
fn changed(
    input: &Tensor,
    rows: &[usize],
    from: Option<usize>,
    modulus: i64,
    seed: u64,
) -> Result<Tensor> {
    let dims = input.dims().to_vec();
    let n = dims[0];
    let per_row = input.elem_count() / n.max(1);
    let inner = if dims.len() >= 2 {
        per_row / dims[1]
    } else {
        per_row
    };
    let touched = |k: usize| {
        let row = k / per_row;
        let pos = (k % per_row) / inner.max(1);
        rows.contains(&row) && from.is_none_or(|f| pos >= f)
    };
    if input.dtype().is_float() {
        let mut v = host_f32(input)?;
        let scale = (v.iter().map(|x| x * x).sum::<f32>() / v.len().max(1) as f32)
            .sqrt()
            .max(1e-3);
        let mut rng = SeededRng::derive(seed, "batch-leak");
        for (k, x) in v.iter_mut().enumerate() {
            if touched(k) {
                *x += scale * rng.normal() as f32;
            }
        }
        Tensor::from_vec(v, dims, input.device())?.to_dtype(input.dtype())
    } else {
        let mut v = host_i64(input)?;
        for (k, x) in v.iter_mut().enumerate() {
            if touched(k) {
                *x = (*x + 1).rem_euclid(modulus);
            }
        }
        Tensor::from_vec(v, dims, input.device())?.to_dtype(input.dtype())
    }
}

#[cfg(test)]
mod tests {
    use super::moved_by;

    #[test]
    fn an_output_that_turns_nan_or_infinite_has_moved() {
        assert_eq!(moved_by(1.0, 1.5), 0.5);
        assert_eq!(moved_by(1.0, f32::NAN), f64::INFINITY);
        assert_eq!(moved_by(f32::INFINITY, f32::INFINITY), 0.0);
        assert_eq!(moved_by(f32::INFINITY, f32::NEG_INFINITY), f64::INFINITY);
        assert_eq!(moved_by(f32::NAN, f32::NAN), f64::INFINITY);
    }
}
