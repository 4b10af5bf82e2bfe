//! Deterministic toy data for the zoo: the same batch for the same seed.

use crate::rng::SeededRng;
use candle_core::{Device, Result, Tensor};

/// Mean of pixel values drawn uniformly from 0..=255.
pub const PIXEL_MEAN: f64 = 127.5;
/// Standard deviation of pixel values drawn uniformly from 0..=255: sqrt((256² − 1) / 12).
pub const PIXEL_STD: f64 = 73.9;

/// Raw pixel values 0..=255 (as F32) of `shape`, like an image decoded from a file.
pub fn pixels(seed: u64, shape: &[usize], device: &Device) -> Result<Tensor> {
    let mut rng = SeededRng::derive(seed, "zoo.pixels");
    let n: usize = shape.iter().product();
    let data: Vec<f32> = (0..n).map(|_| rng.below(256) as f32).collect();
    Tensor::from_vec(data, shape, device)
}

/// Pixels scaled to zero mean and unit variance, as every image pipeline should.
pub fn standardise(pixels: &Tensor) -> Result<Tensor> {
    pixels.affine(1.0 / PIXEL_STD, -PIXEL_MEAN / PIXEL_STD)
}

/// `counts[c]` labels of class `c`, shuffled: an I64 tensor `[sum(counts)]`.
pub fn labels_with_counts(seed: u64, counts: &[usize], device: &Device) -> Result<Tensor> {
    let mut ids: Vec<i64> = counts
        .iter()
        .enumerate()
        .flat_map(|(c, &k)| std::iter::repeat_n(c as i64, k))
        .collect();
    let mut rng = SeededRng::derive(seed, "zoo.labels");
    // Fisher–Yates.
    for i in (1..ids.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        ids.swap(i, j);
    }
    let n = ids.len();
    Tensor::from_vec(ids, n, device)
}

/// `n` labels, `n / classes` of each class (balanced), shuffled.
pub fn balanced_labels(seed: u64, n: usize, classes: usize, device: &Device) -> Result<Tensor> {
    let counts: Vec<usize> = (0..classes)
        .map(|c| n / classes + usize::from(c < n % classes))
        .collect();
    labels_with_counts(seed, &counts, device)
}

/// The padding token of the zoo's language models; real tokens are `1..vocab`.
pub const PAD_TOKEN: u32 = 0;

/// A padded causal-LM batch: `input` U32 `[rows, len]`, `targets` I64 `[rows, len]`.
///
/// Row `i` holds `lengths[i]` real tokens, then [`PAD_TOKEN`]. `targets[t]` is the next real
/// token, shifted by one; the positions with no next real token are `pad_target` (`-100` when
/// done right).
pub struct LmBatch {
    /// Token ids, U32 `[rows, len]`.
    pub input: Tensor,
    /// Next-token targets, I64 `[rows, len]`.
    pub targets: Tensor,
}

/// Row lengths for a `len`-token batch: some full, some padded (about 20% of positions), the
/// order shuffled by the seed.
fn row_lengths(seed: u64, rows: usize, len: usize) -> Vec<usize> {
    let mut rng = SeededRng::derive(seed, "zoo.row-lengths");
    let mut lengths: Vec<usize> = (0..rows).map(|i| len - (i * 3) % (len / 2 + 1)).collect();
    for i in (1..lengths.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        lengths.swap(i, j);
    }
    lengths
}

/// One row of a causal-LM batch: the first `real` tokens of `seq` (which holds one more, the
/// last real position's next token) with their next tokens as targets, then [`PAD_TOKEN`] up to
/// `len` with `pad_target`.
pub fn push_padded_row(
    seq: &[u32],
    real: usize,
    len: usize,
    pad_target: i64,
    input: &mut Vec<u32>,
    targets: &mut Vec<i64>,
) {
    for t in 0..len {
        if t < real {
            input.push(seq[t]);
            targets.push(i64::from(seq[t + 1]));
        } else {
            input.push(PAD_TOKEN);
            targets.push(pad_target);
        }
    }
}

/// Random token sequences padded at the end; see [`LmBatch`].
pub fn lm_batch(
    seed: u64,
    rows: usize,
    len: usize,
    vocab: usize,
    pad_target: i64,
    device: &Device,
) -> Result<LmBatch> {
    let mut rng = SeededRng::derive(seed, "zoo.tokens");
    let lengths = row_lengths(seed, rows, len);
    let mut input = Vec::with_capacity(rows * len);
    let mut targets = Vec::with_capacity(rows * len);
    for &real in &lengths {
        // One token more than the row shows: the last real position has a next token too.
        let seq: Vec<u32> = (0..=real)
            .map(|_| 1 + rng.below(vocab as u64 - 1) as u32)
            .collect();
        push_padded_row(&seq, real, len, pad_target, &mut input, &mut targets);
    }
    Ok(LmBatch {
        input: Tensor::from_vec(input, (rows, len), device)?,
        targets: Tensor::from_vec(targets, (rows, len), device)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::IGNORE_INDEX;

    #[test]
    fn batches_repeat_for_a_seed_and_change_with_it() -> Result<()> {
        let d = Device::Cpu;
        let a = lm_batch(1, 4, 8, 16, IGNORE_INDEX, &d)?;
        let b = lm_batch(1, 4, 8, 16, IGNORE_INDEX, &d)?;
        let c = lm_batch(2, 4, 8, 16, IGNORE_INDEX, &d)?;
        assert_eq!(a.input.to_vec2::<u32>()?, b.input.to_vec2::<u32>()?);
        assert_ne!(a.input.to_vec2::<u32>()?, c.input.to_vec2::<u32>()?);
        assert_eq!(
            pixels(3, &[2, 2], &d)?.to_vec2::<f32>()?,
            pixels(3, &[2, 2], &d)?.to_vec2::<f32>()?
        );
        Ok(())
    }

    #[test]
    fn lm_targets_are_shifted_and_padding_is_ignored() -> Result<()> {
        let b = lm_batch(5, 6, 10, 32, IGNORE_INDEX, &Device::Cpu)?;
        let input = b.input.to_vec2::<u32>()?;
        let targets = b.targets.to_vec2::<i64>()?;
        let mut padded_rows = 0;
        for (x, y) in input.iter().zip(&targets) {
            let real = x.iter().take_while(|&&t| t != PAD_TOKEN).count();
            padded_rows += usize::from(real < x.len());
            for t in 0..x.len() {
                if t < real {
                    assert!(y[t] >= 1);
                    if t + 1 < real {
                        assert_eq!(y[t], i64::from(x[t + 1]), "shifted by one");
                    }
                } else {
                    assert_eq!(x[t], PAD_TOKEN);
                    assert_eq!(y[t], IGNORE_INDEX);
                }
            }
        }
        assert!(padded_rows >= 2);
        Ok(())
    }

    #[test]
    fn label_counts_are_exact() -> Result<()> {
        let l = labels_with_counts(0, &[5, 1, 2], &Device::Cpu)?.to_vec1::<i64>()?;
        assert_eq!(l.iter().filter(|&&c| c == 0).count(), 5);
        assert_eq!(l.iter().filter(|&&c| c == 2).count(), 2);
        let b = balanced_labels(0, 10, 4, &Device::Cpu)?.to_vec1::<i64>()?;
        assert_eq!(b.iter().filter(|&&c| c == 3).count(), 2);
        Ok(())
    }
}
