//! A model on fresh, seeded parameters plus its own batch: what every check starts from.

use crate::init::{seeded_var_builder, ParamStore, Snapshot};
use crate::model::{Batch, DebugModel};
use crate::options::Options;
use candle_core::Result;

/// A freshly built model, its parameters (sorted by name) and its batch for the seed.
pub struct Fresh<M> {
    /// The model, built from seeded parameters.
    pub model: M,
    /// Its parameters (and buffers), by name.
    pub params: ParamStore,
    /// The model's batch for the seed.
    pub batch: Batch,
}

impl<M: DebugModel> Fresh<M> {
    /// Builds `M` from `SeededRng`-drawn parameters for `seed` and takes `M::batch(device, seed)`.
    ///
    /// A float input (and float regression targets) is converted to `opts.dtype`, so a model
    /// checked in half precision gets half-precision data.
    pub fn new(opts: &Options, seed: u64) -> Result<Fresh<M>> {
        let (params, vb) = seeded_var_builder(seed, opts.dtype, &opts.device);
        let model = M::build(vb)?;
        let batch = in_dtype(M::batch(&opts.device, seed)?, opts.dtype)?;
        Ok(Fresh {
            model,
            params,
            batch,
        })
    }
}

/// Runs `f` and then puts every parameter in `params` back as it was, whatever `f` returned,
/// even when it panicked.
pub(crate) fn restoring<T>(params: &ParamStore, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let guard = RestoreOnDrop {
        params,
        saved: Some(params.snapshot()?),
    };
    let outcome = f();
    guard.finish()?;
    outcome
}

struct RestoreOnDrop<'a> {
    params: &'a ParamStore,
    saved: Option<Snapshot>,
}

impl RestoreOnDrop<'_> {
    fn finish(mut self) -> Result<()> {
        match self.saved.take() {
            Some(saved) => self.params.restore(&saved),
            None => Ok(()),
        }
    }
}

impl Drop for RestoreOnDrop<'_> {
    fn drop(&mut self) {
        // Only reached without `finish` while unwinding from a panic: restore as best we can.
        if let Some(saved) = self.saved.take() {
            let _ = self.params.restore(&saved);
        }
    }
}

/// The batch with its float input (and float regression targets) in `dtype`, so a model checked
/// in half precision gets half-precision data; integer ids and labels stay as they are. Every
/// check that builds its own batch goes through it.
pub fn in_dtype(batch: Batch, dtype: candle_core::DType) -> Result<Batch> {
    let convert = |t: candle_core::Tensor| -> Result<candle_core::Tensor> {
        if t.dtype().is_float() && t.dtype() != dtype {
            t.to_dtype(dtype)
        } else {
            Ok(t)
        }
    };
    Ok(Batch {
        input: convert(batch.input)?,
        targets: convert(batch.targets)?,
    })
}
