//! A llama-style shape from a bare parameter count (`mldebug memory --params 7B`), whose own
//! parameter count is the one given, within [`GUESS_TOLERANCE`].
//!
//! The weights, gradients and optimizer state are counted from the shape, so the shape must hold
//! the count it was guessed from; only the split into layers, width, MLP and vocabulary (which
//! the activations and logits depend on) is a guess. Depth and width follow Llama's proportions
//! (128 hidden units a layer), the vocabulary is Llama 2's unless that would make a small model
//! mostly embeddings, and the MLP width takes up what remains of the count.

use crate::architecture::{Shape, MAX_LAYERS, MAX_VOCAB, MAX_WIDTH};

/// Hidden units per layer: Llama 2 7B (4096 wide, 32 layers) and 13B (5120, 40) both have 128.
pub const GUESS_WIDTH_PER_LAYER: u64 = 128;
/// Vocabulary of the guessed shape (Llama 2's), where it is at most [`MAX_EMBEDDING_SHARE`].
pub const GUESS_VOCAB: u64 = 32_000;
/// The share of the count the input embedding and the output head may take: a small model
/// with Llama's vocabulary would be all embeddings and no layers.
pub const MAX_EMBEDDING_SHARE: f64 = 0.5;
/// MLP width over model width that Llama's SwiGLU blocks use (11008 / 4096 ≈ 8/3).
pub const MLP_RATIO: f64 = 8.0 / 3.0;
/// Head dimension from this width on (Llama's); narrower models use
/// [`SMALL_HEAD_DIM`] (GPT-2's), so that they have several heads.
pub const WIDE_FROM: u64 = 1024;
/// Head dimension of a wide model.
pub const WIDE_HEAD_DIM: u64 = 128;
/// Head dimension of a narrow model, and the narrowest width guessed.
pub const SMALL_HEAD_DIM: u64 = 64;
/// The guessed shape's parameter count is within this fraction of the count given: the MLP
/// width is a whole number, so the count can miss by up to 1.5 × width × layers.
pub const GUESS_TOLERANCE: f64 = 0.01;
/// The smallest count accepted: below it no llama-style shape of [`SMALL_HEAD_DIM`]-wide heads
/// is a sensible guess, and the memory is small on any GPU; give the shape with `--layers
/// --hidden --heads --vocab` instead.
pub const MIN_GUESS_PARAMS: u64 = 1_000_000;
/// The largest count accepted (100 trillion): a guess stays inside [`MAX_LAYERS`] and
/// [`MAX_WIDTH`].
pub const MAX_GUESS_PARAMS: u64 = 100_000_000_000_000;

/// The count given as `--params`, checked against [`MIN_GUESS_PARAMS`] and [`MAX_GUESS_PARAMS`].
pub fn parse_guess_count(text: &str) -> Result<u64, String> {
    let n = crate::units::parse_count(text)?;
    if !(MIN_GUESS_PARAMS..=MAX_GUESS_PARAMS).contains(&n) {
        return Err(format!(
            "`{}` is out of range (expected 1M to 100T parameters; for a smaller model give \
             its shape with --layers --hidden --heads --vocab)",
            text.escape_debug()
        ));
    }
    Ok(n)
}

/// Blocks and embeddings of a shape `hidden` wide with Llama's proportions, as a real number:
/// 12·h² a layer (4h² attention, 8h² MLP), h/128 layers (at least one), and the embedding and
/// head at Llama's vocabulary or [`MAX_EMBEDDING_SHARE`] of `n`.
fn proportional_count(hidden: f64, n: f64) -> f64 {
    let layers = (hidden / GUESS_WIDTH_PER_LAYER as f64).max(1.0);
    let embeddings = (2.0 * GUESS_VOCAB as f64 * hidden).min(MAX_EMBEDDING_SHARE * n);
    12.0 * hidden * hidden * layers + embeddings
}

/// The width at which [`proportional_count`] reaches `n` (it rises with the width).
fn proportional_width(n: f64) -> f64 {
    let (mut lo, mut hi) = (1.0, MAX_WIDTH as f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if proportional_count(mid, n) < n {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

fn head_dim_for(hidden: u64) -> u64 {
    if hidden >= WIDE_FROM {
        WIDE_HEAD_DIM
    } else {
        SMALL_HEAD_DIM
    }
}

/// The shape of `layers` × `hidden` that holds `params`: the vocabulary, then the MLP width
/// from what is left; `None` when no MLP width is left.
fn fit(params: u64, layers: u64, hidden: u64) -> Option<Shape> {
    let heads = hidden / head_dim_for(hidden);
    let budget = (MAX_EMBEDDING_SHARE * params as f64 / (2 * hidden) as f64) as u64;
    let vocab = GUESS_VOCAB.min(budget).max(1);
    let mut shape = Shape::llama_style(layers, hidden, 1, heads, heads, vocab);
    // Everything but the MLP: the MLP's weights are 3·h·m a layer.
    let rest = shape.params().total - layers * 3 * hidden;
    let per_unit = 3 * hidden * layers;
    let left = params.checked_sub(rest)?;
    let intermediate = (left as f64 / per_unit as f64).round() as u64;
    if intermediate == 0 {
        return None;
    }
    shape.intermediate = intermediate;
    Some(shape)
}

/// How far a candidate is from Llama's proportions: its MLP ratio and its width per layer.
fn distance(shape: &Shape, ideal_hidden: f64) -> f64 {
    let ratio = shape.intermediate as f64 / shape.hidden as f64;
    (ratio / MLP_RATIO).ln().abs() + (shape.hidden as f64 / ideal_hidden).ln().abs()
}

/// A llama-style shape whose parameter count is `params` within [`GUESS_TOLERANCE`], for every
/// count from [`MIN_GUESS_PARAMS`] to [`MAX_GUESS_PARAMS`]; an error outside them.
pub fn guess_shape(params: u64) -> Result<Shape, String> {
    if !(MIN_GUESS_PARAMS..=MAX_GUESS_PARAMS).contains(&params) {
        return Err(format!(
            "--params {params} is out of range (expected {MIN_GUESS_PARAMS} to {MAX_GUESS_PARAMS})"
        ));
    }
    let ideal = proportional_width(params as f64);
    let ideal_layers = ideal / GUESS_WIDTH_PER_LAYER as f64;
    let step = head_dim_for(ideal as u64);
    // Widths within a quarter of the ideal, in whole heads; depths either side of the ideal.
    let (lo, hi) = (
        ((0.75 * ideal) as u64 / step).max(1),
        (1.25 * ideal) as u64 / step + 1,
    );
    let depths = [ideal_layers.floor(), ideal_layers.ceil()].map(|l| (l as u64).max(1));
    let mut best: Option<(f64, Shape)> = None;
    for layers in depths {
        for hidden in (lo..=hi).map(|k| k * step) {
            let Some(shape) = fit(params, layers, hidden) else {
                continue;
            };
            let miss = (shape.params().total as f64 / params as f64 - 1.0).abs();
            if miss > GUESS_TOLERANCE || shape.check_limits().is_err() {
                continue;
            }
            let d = distance(&shape, ideal);
            if best.as_ref().is_none_or(|(b, _)| d < *b) {
                best = Some((d, shape));
            }
        }
    }
    best.map(|(_, s)| s).ok_or_else(|| {
        format!("no llama-style shape within {MAX_LAYERS} layers and {MAX_VOCAB} tokens holds {params} parameters")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Log-spaced counts over everything `--params` accepts, its ends included.
    fn counts() -> Vec<u64> {
        let (lo, hi) = (
            (MIN_GUESS_PARAMS as f64).ln(),
            (MAX_GUESS_PARAMS as f64).ln(),
        );
        let steps = 400;
        (0..=steps)
            .map(|i| (lo + (hi - lo) * i as f64 / steps as f64).exp().round() as u64)
            .map(|n| n.clamp(MIN_GUESS_PARAMS, MAX_GUESS_PARAMS))
            .chain([
                MIN_GUESS_PARAMS,
                MIN_GUESS_PARAMS + 1,
                10_000_000,
                124_000_000,
                124_439_808,
                1_100_000_000,
                7_000_000_000,
                70_000_000_000,
                MAX_GUESS_PARAMS,
            ])
            .collect()
    }

    #[test]
    fn every_accepted_count_is_held_by_its_guessed_shape() {
        for n in counts() {
            let s = guess_shape(n).unwrap_or_else(|e| panic!("{n}: {e}"));
            let total = s.params().total;
            let miss = (total as f64 / n as f64 - 1.0).abs();
            assert!(
                miss <= GUESS_TOLERANCE,
                "{n}: the shape holds {total} ({s:?})"
            );
            s.check_limits().unwrap();
            // A llama-like shape: whole heads, an MLP 1 to 8 times the width, embeddings at
            // most their share.
            assert_eq!(s.heads * s.head_dim, s.hidden, "{n}: {s:?}");
            let ratio = s.intermediate as f64 / s.hidden as f64;
            assert!(
                (1.0..=8.0).contains(&ratio),
                "{n}: MLP ratio {ratio} ({s:?})"
            );
            let p = s.params();
            assert!(
                (p.embeddings + p.head) as f64 <= MAX_EMBEDDING_SHARE * n as f64 + 1.0,
                "{n}: {p:?}"
            );
        }
    }

    #[test]
    fn known_sizes_come_out_near_the_real_models() {
        // Llama 2 7B: 32 layers, 4096 wide, MLP 11008.
        let s = guess_shape(7_000_000_000).unwrap();
        assert!((31..=33).contains(&s.layers), "{s:?}");
        assert!((3840..=4480).contains(&s.hidden), "{s:?}");
        assert_eq!(s.vocab, GUESS_VOCAB);
        // A small model keeps layers: its vocabulary shrinks instead.
        let s = guess_shape(1_000_000).unwrap();
        assert!(s.vocab < GUESS_VOCAB && s.layers >= 1, "{s:?}");
    }

    #[test]
    fn counts_outside_the_range_are_refused() {
        assert!(guess_shape(MIN_GUESS_PARAMS - 1).is_err());
        assert!(guess_shape(MAX_GUESS_PARAMS + 1).is_err());
        assert!(parse_guess_count("999K")
            .unwrap_err()
            .contains("1M to 100T"));
        assert_eq!(parse_guess_count("1M"), Ok(MIN_GUESS_PARAMS));
        assert_eq!(parse_guess_count("100T"), Ok(MAX_GUESS_PARAMS));
    }
}
