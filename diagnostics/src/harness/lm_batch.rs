//! Batches for a model checked without code of its own: a causal-LM batch with learnable
//! structure, and the user's real batch read from a safetensors file.
//!
//! Not for: the zoo's own batches (`zoo::data`), which keep their own seeds and shapes.

use crate::model::{Batch, IGNORE_INDEX};
use crate::rng::SeededRng;
use candle_core::{DType, Device, Tensor};
use std::path::Path;

/// The padding token id (the zoo's).
pub use crate::zoo::data::PAD_TOKEN;

/// Every how many tokens the sequence follows its rule: the rest is noise, so the batch is
/// learnable (a model that learns the rule gets well below ln V) but not trivially so.
const NOISE_EVERY: u64 = 8;

/// A deterministic causal-LM batch: `rows` sequences of `len` token ids (U32) in `1..vocab`,
/// targets (I64) the same sequences shifted by one (the target at `t` is the input at `t + 1`,
/// drawn one token past the end for the last position).
///
/// The sequences have structure a model can learn: each next token is a fixed (seeded)
/// permutation of the previous one, except one token in `NOISE_EVERY` drawn at random. With
/// `pad > 0`, every other row ends in `pad` padded positions ([`PAD_TOKEN`] in, [`IGNORE_INDEX`]
/// out), as a padded real batch does. The same seed gives the same batch.
pub fn causal_lm_batch(
    rows: usize,
    len: usize,
    vocab: usize,
    pad: usize,
    device: &Device,
    seed: u64,
) -> candle_core::Result<Batch> {
    if rows == 0 || len == 0 || vocab < 3 || pad >= len {
        candle_core::bail!(
            "causal-LM batch: needs rows > 0, len > 0, vocab >= 3 and pad < len \
             (got {rows}x{len}, vocab {vocab}, pad {pad})"
        );
    }
    let mut rng = SeededRng::derive(seed, "batch.causal-lm");
    // A permutation of 1..vocab: the rule "next = next_of[prev]".
    let mut next_of: Vec<u32> = (1..vocab as u32).collect();
    for i in (1..next_of.len()).rev() {
        next_of.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let draw = |rng: &mut SeededRng| 1 + rng.below(vocab as u64 - 1) as u32;
    let mut input = Vec::with_capacity(rows * len);
    let mut targets = Vec::with_capacity(rows * len);
    for row in 0..rows {
        let mut seq = vec![draw(&mut rng)];
        while seq.len() <= len {
            let prev = seq[seq.len() - 1];
            let next = if rng.below(NOISE_EVERY) == 0 {
                draw(&mut rng)
            } else {
                next_of[prev as usize - 1]
            };
            seq.push(next);
        }
        let real = if row % 2 == 1 { len - pad } else { len };
        crate::zoo::data::push_padded_row(&seq, real, len, IGNORE_INDEX, &mut input, &mut targets);
    }
    Ok(Batch {
        input: Tensor::from_vec(input, (rows, len), device)?,
        targets: Tensor::from_vec(targets, (rows, len), device)?,
    })
}

/// The user's own batch from a safetensors file holding tensors named `input` and `targets`.
///
/// Integer targets become I64 (the checks' contract; `-100` stays ignored), float targets stay
/// F32 (regression). Float input becomes F32; integer input stays U8, U32 (U16 is read as U32)
/// or I64, and I16 and I32 become I64 (candle's embedding takes U8, U32 and I64). Both need at
/// least one row, and the same number of rows; targets are `[N]` or `[N, T]`. (`mldebug check
/// --batch` checks all of this, and the ids, before it builds anything.)
pub fn batch_from_safetensors(path: &Path, device: &Device) -> candle_core::Result<Batch> {
    let tensors = candle_core::safetensors::load(path, device).map_err(|e| {
        candle_core::Error::Msg(format!("--batch {}: cannot read it: {e}", path.display()))
    })?;
    let get = |name: &str| {
        tensors.get(name).cloned().ok_or_else(|| {
            let mut names: Vec<&String> = tensors.keys().collect();
            names.sort();
            candle_core::Error::Msg(format!(
                "--batch {}: no tensor named `{name}` (it holds {names:?}); save the model's \
                 input as `input` and the labels as `targets`",
                path.display()
            ))
        })
    };
    let input = get("input")?;
    let targets = get("targets")?;
    let input = match input.dtype() {
        DType::F16 | DType::BF16 | DType::F64 => input.to_dtype(DType::F32)?,
        DType::I16 | DType::I32 => input.to_dtype(DType::I64)?,
        _ => input,
    };
    let targets = match targets.dtype() {
        DType::U8 | DType::U32 | DType::I16 | DType::I32 => targets.to_dtype(DType::I64)?,
        DType::F16 | DType::BF16 | DType::F64 => targets.to_dtype(DType::F32)?,
        _ => targets,
    };
    let empty = |t: &Tensor| t.rank() == 0 || t.dims().contains(&0);
    if empty(&input) || empty(&targets) || !(1..=2).contains(&targets.rank()) {
        candle_core::bail!(
            "--batch {}: `input` {:?} and `targets` {:?}: both need at least one row, and \
             targets are [N] or [N, T]",
            path.display(),
            input.dims(),
            targets.dims()
        );
    }
    if input.dims().first() != targets.dims().first() {
        candle_core::bail!(
            "--batch {}: `input` {:?} and `targets` {:?} differ in their first (batch) dimension",
            path.display(),
            input.dims(),
            targets.dims()
        );
    }
    Ok(Batch { input, targets })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lm_batches_are_shifted_padded_and_repeat_for_a_seed() -> candle_core::Result<()> {
        let d = Device::Cpu;
        let a = causal_lm_batch(4, 12, 20, 3, &d, 1)?;
        let b = causal_lm_batch(4, 12, 20, 3, &d, 1)?;
        let c = causal_lm_batch(4, 12, 20, 3, &d, 2)?;
        let x = a.input.to_vec2::<u32>()?;
        let y = a.targets.to_vec2::<i64>()?;
        assert_eq!(x, b.input.to_vec2::<u32>()?);
        assert_ne!(x, c.input.to_vec2::<u32>()?);
        for (row, (xs, ys)) in x.iter().zip(&y).enumerate() {
            let real = if row % 2 == 1 { 9 } else { 12 };
            for t in 0..real - 1 {
                assert_eq!(
                    i64::from(xs[t + 1]),
                    ys[t],
                    "row {row} t {t}: shifted by one"
                );
            }
            assert!(xs[..real].iter().all(|&v| (1..20).contains(&v)));
            assert!(xs[real..].iter().all(|&v| v == PAD_TOKEN));
            assert!(ys[real..].iter().all(|&v| v == IGNORE_INDEX));
        }
        Ok(())
    }

    #[test]
    fn lm_batches_follow_a_learnable_rule() -> candle_core::Result<()> {
        let b = causal_lm_batch(16, 32, 48, 0, &Device::Cpu, 0)?;
        let x = b.input.to_vec2::<u32>()?;
        let y = b.targets.to_vec2::<i64>()?;
        // The most frequent successor of each token explains most transitions.
        let mut counts = vec![vec![0usize; 48]; 48];
        for (xs, ys) in x.iter().zip(&y) {
            for (&a, &n) in xs.iter().zip(ys) {
                counts[a as usize][n as usize] += 1;
            }
        }
        let explained: usize = counts.iter().map(|c| c.iter().max().unwrap()).sum();
        let total = 16 * 32;
        assert!(explained * 4 > total * 3, "{explained} of {total}");
        Ok(())
    }

    #[test]
    fn bad_shapes_are_errors() {
        for (r, l, v, p) in [(0, 4, 10, 0), (2, 4, 2, 0), (2, 4, 10, 4)] {
            assert!(causal_lm_batch(r, l, v, p, &Device::Cpu, 0).is_err());
        }
    }

    #[test]
    fn a_safetensors_batch_reads_back_with_i64_targets() -> candle_core::Result<()> {
        let dir = std::env::temp_dir().join(format!("mldebug-batch-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let path = dir.join("b.safetensors");
        let d = Device::Cpu;
        let input = Tensor::new(&[[1u32, 2, 3], [4, 5, 6]], &d)?;
        let targets = Tensor::new(&[[2u32, 3, 4], [5, 6, 7]], &d)?;
        candle_core::safetensors::save(
            &[("input", input), ("targets", targets)]
                .into_iter()
                .collect(),
            &path,
        )?;
        let b = batch_from_safetensors(&path, &d)?;
        assert_eq!(b.targets.dtype(), DType::I64);
        assert_eq!(b.targets.to_vec2::<i64>()?[1], [5, 6, 7]);
        let missing = dir.join("m.safetensors");
        candle_core::safetensors::save(
            &[("x", Tensor::new(&[1f32], &d)?)].into_iter().collect(),
            &missing,
        )?;
        let e = batch_from_safetensors(&missing, &d)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no tensor named `input`"), "{e}");
        // I32 token ids become I64 (an embedding takes no I32); empty and rank-3 targets fail.
        let wide = dir.join("w.safetensors");
        let ids = Tensor::new(&[[1i32, 2], [3, 4]], &d)?;
        candle_core::safetensors::save(
            &[("input", ids.clone()), ("targets", ids.clone())]
                .into_iter()
                .collect(),
            &wide,
        )?;
        assert_eq!(batch_from_safetensors(&wide, &d)?.input.dtype(), DType::I64);
        for bad in [Tensor::zeros((0, 2), DType::I64, &d)?, ids.unsqueeze(0)?] {
            candle_core::safetensors::save(
                &[("input", ids.clone()), ("targets", bad)]
                    .into_iter()
                    .collect(),
                &wide,
            )?;
            let e = batch_from_safetensors(&wide, &d).unwrap_err().to_string();
            assert!(e.contains("at least one row"), "{e}");
        }
        std::fs::remove_dir_all(&dir)?;
        Ok(())
    }
}
