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
//! A tiny transformer whose token embeddings were scaled until they overflowed; the frame table
//! from [`StepSummary::frame_table`] (trimmed to the last few frames):
//!
//! ```text
//! FRAME_TABLE_EXAMPLE
//! ```
//!
//! Read it bottom-up. The last line is the first module whose output held a NaN or an infinity
//! (here the embedding itself: every one of its 256 outputs was infinite). The lines above it are
//! the frames recorded before it, oldest first, from this step and the steps before; they show
//! whether values were growing towards the f32 limit (3.4e38) or were fine until then. A NaN that
//! first appears after a normalisation or a softmax usually means its input overflowed; one
//! that appears at the first layer means the input batch or the parameters already held it.
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
