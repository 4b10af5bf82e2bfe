//! `llama-candle`: the real `candle_transformers` Llama, tiny config, random weights.
//!
//! A known-bad model for training: its RmsNorm takes candle's fused kernel and its attention
//! uses `softmax_last_dim` and the fused `rope`, none of which has a backward, so a loss on its
//! logits gives a gradient to `lm_head.weight` alone (1 of 21 parameters). It returns the logits
//! of the last position only, so it is checked as a classifier: predict the token that follows
//! each row.

use crate::model::{Batch, DebugModel};
use crate::rng::SeededRng;
use candle_core::{DType, Device, Result, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::llama::{Cache, Config, Llama};
use std::cell::RefCell;

/// Vocabulary size.
pub const VOCAB: usize = 128;
/// Rows in the batch.
pub const ROWS: usize = 4;
/// Tokens per row.
pub const SEQ: usize = 16;

/// Two layers, 64 wide, 4 heads of which 2 key/value heads: 21 parameters.
pub fn tiny_config() -> Config {
    Config {
        hidden_size: 64,
        intermediate_size: 128,
        vocab_size: VOCAB,
        num_hidden_layers: 2,
        num_attention_heads: 4,
        num_key_value_heads: 2,
        use_flash_attn: false,
        rms_norm_eps: 1e-5,
        rope_theta: 10_000.0,
        bos_token_id: None,
        eos_token_id: None,
        rope_scaling: None,
        max_position_embeddings: 64,
        tie_word_embeddings: false,
    }
}

/// candle-transformers' llama with a 2-layer config, random weights.
pub struct LlamaCandle {
    model: Llama,
    // `Llama::forward` wants `&mut Cache`; with the kv-cache off it only holds masks and tables.
    cache: RefCell<Cache>,
}

impl DebugModel for LlamaCandle {
    fn build(vb: VarBuilder) -> Result<Self> {
        let cfg = tiny_config();
        let cache = Cache::new(false, vb.dtype(), &cfg, vb.device())?;
        Ok(LlamaCandle {
            model: Llama::load(vb, &cfg)?,
            cache: RefCell::new(cache),
        })
    }

    fn batch(device: &Device, seed: u64) -> Result<Batch> {
        let mut rng = SeededRng::derive(seed, "zoo.llama-tokens");
        let tokens: Vec<u32> = (0..ROWS * (SEQ + 1))
            .map(|_| rng.below(VOCAB as u64) as u32)
            .collect();
        let all = Tensor::from_vec(tokens, (ROWS, SEQ + 1), device)?;
        Ok(Batch {
            input: all.narrow(1, 0, SEQ)?,
            targets: all.narrow(1, SEQ, 1)?.squeeze(1)?.to_dtype(DType::I64)?,
        })
    }

    fn forward(&self, input: &Tensor, _train: bool) -> Result<Tensor> {
        self.model
            .forward(&input.contiguous()?, 0, &mut self.cache.borrow_mut())
    }
}
