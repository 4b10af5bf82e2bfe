//! Loss helpers shared by the default `DebugModel::loss` and the checks.

use candle_core::{Result, Tensor};

/// Mean cross-entropy over the last dim of `logits`, ignoring targets equal to `IGNORE_INDEX`.
pub fn masked_cross_entropy(_logits: &Tensor, _targets: &Tensor) -> Result<Tensor> {
    unimplemented!("filled in by the checks work")
}
