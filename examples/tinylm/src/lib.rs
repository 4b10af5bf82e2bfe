//! A tiny language model written the way candle's examples write models: token embedding, two
//! pre-norm MLP blocks, a final norm and an output head. Its norms are candle-nn's default
//! `layer_norm`, whose fused forward has no backward: only `head` learns.

use candle_core::{Result, Tensor};
use candle_nn::{embedding, layer_norm, linear, Embedding, LayerNorm, Linear, Module, VarBuilder};

/// Model width.
pub const DIM: usize = 32;
/// Vocabulary size.
pub const VOCAB: usize = 48;
/// Residual blocks.
pub const BLOCKS: usize = 2;

struct Block {
    ln: LayerNorm,
    up: Linear,
    down: Linear,
}

impl Block {
    fn new(vb: VarBuilder) -> Result<Block> {
        Ok(Block {
            ln: layer_norm(DIM, 1e-5, vb.pp("ln"))?,
            up: linear(DIM, 4 * DIM, vb.pp("up"))?,
            down: linear(4 * DIM, DIM, vb.pp("down"))?,
        })
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let h = self.ln.forward(x)?;
        let h = self.down.forward(&self.up.forward(&h)?.gelu()?)?;
        x + h
    }
}

pub struct TinyLm {
    embed: Embedding,
    blocks: Vec<Block>,
    ln_f: LayerNorm,
    head: Linear,
}

impl TinyLm {
    pub fn new(vb: VarBuilder) -> Result<TinyLm> {
        let embed = embedding(VOCAB, DIM, vb.pp("embed"))?;
        let blocks = (0..BLOCKS)
            .map(|i| Block::new(vb.pp(format!("blocks.{i}"))))
            .collect::<Result<Vec<_>>>()?;
        Ok(TinyLm {
            embed,
            blocks,
            ln_f: layer_norm(DIM, 1e-5, vb.pp("ln_f"))?,
            head: linear(DIM, VOCAB, vb.pp("head"))?,
        })
    }

    /// Logits `[batch, time, vocab]` for token ids `[batch, time]`.
    pub fn forward(&self, tokens: &Tensor) -> Result<Tensor> {
        let mut x = self.embed.forward(tokens)?;
        for b in &self.blocks {
            x = b.forward(&x)?;
        }
        self.head.forward(&self.ln_f.forward(&x)?)
    }
}
