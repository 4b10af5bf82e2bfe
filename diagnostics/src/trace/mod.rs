//! The frame recorder: which module produced the first NaN, and which module cut the gradient.
//!
//! candle has no forward hooks, so recording works by wrapping layers: the constructors in
//! [`crate::nn`] (`nn::linear`, `nn::rms_norm`, ...) build candle's own layers, named from
//! `vb.prefix()`, and after each forward they hand their output to the thread-local [`Recorder`]
//! if one is running. Per output the recorder keeps three numbers on the device — abs-min,
//! abs-max and the count of NaN/inf values — and reads them back to the host once per step, in
//! [`Recorder::end_step`]. It keeps the last 21 frames in a ring, so when a value first turns
//! non-finite you get that module and the 20 outputs before it.
//!
//! It also notices gradient cuts: a module whose input depends on a parameter but whose output
//! does not (candle's fused `rms_norm`, `layer_norm`, `softmax_last_dim` and `rope` kernels have
//! no backward, so `RmsNorm::forward` and the default `LayerNorm` silently stop gradients).
//! Those module names come back in [`StepSummary::cuts`].
//!
//! Not for: timing (use `tracing`), or recording gradients of activations.
//!
//! # Reading the output
//!
//! The zoo's `tiny-gpt` after one weight of `blocks.1.mlp.up` turned NaN (a bad optimizer step,
//! a corrupt checkpoint); the frame table from [`StepSummary::frame_table`], trimmed to the last
//! few of its 20 frames before the culprit:
//!
//! ```text
//!    abs min    abs max  non-fin  module (kind) shape
//!    8.95e-4     6.00e0        0  blocks.1.attn.o (linear) [8, 16, 32]
//!    9.78e-4     3.41e0        0  blocks.1.mlp_norm (rms-norm) [8, 16, 32]
//!    4.47e-4     6.03e0        0  blocks.1.mlp.gate (linear) [8, 16, 64]
//!    5.69e-5     5.14e0      128  blocks.1.mlp.up (linear) [8, 16, 64]  <-- first non-finite
//! ```
//!
//! Read it bottom-up. The marked line is the first module whose output held a NaN or an
//! infinity: 128 of its 8192 outputs, i.e. exactly one output feature across all 8 × 16
//! positions, so one row of its weight is bad, not its input. The lines above are the frames
//! recorded just before it, oldest first (from this step and, once the ring is full, the end
//! of the previous one). Here they are all finite with magnitudes around 1–10, so nothing was
//! drifting towards the f32 limit (3.4e38): the input to `blocks.1.mlp.up` was healthy and the
//! layer itself is the culprit. Had the abs-max column climbed step by step to 1e30 and beyond,
//! the cause would be growth (a learning rate too high, a missing normalisation) and the
//! culprit only the place where it finally overflowed. A NaN first seen at the first layer means
//! the batch or the parameters already held it.
//!
//! # Use in your own training loop
//!
//! See [`Recorder`]: start it, train, call `end_step()` after each backward, and stop at the
//! first summary with `first_non_finite`.

mod frame;
pub(crate) mod recorder;
mod stats;

pub use frame::{Frame, StepSummary, FRAME_HEADER};
pub use recorder::{is_recording, record, Recorder, DEFAULT_CAPACITY};
pub use stats::frame_stats;
