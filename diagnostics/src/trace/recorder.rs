//! The thread-local frame recorder.
//!
//! The one piece of global state in the crate: a per-thread stack of recorder states. Traced
//! modules call [`record`] after each forward; it does nothing (one thread-local borrow) unless a
//! [`Recorder`] is alive on the calling thread. A forward must therefore run on the thread that
//! started the recorder (candle's own parallelism inside an op is fine).

use super::frame::{Frame, StepSummary};
use super::stats::frame_stats;
use candle_core::{Result, Tensor};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::marker::PhantomData;
use std::sync::Arc;

/// Frames kept in the ring: the failing one and the 20 before it, as HF transformers'
/// `DebugUnderflowOverflow(max_frames_to_save=21)` does.
pub const DEFAULT_CAPACITY: usize = 21;

/// A frame whose statistics still live on the device.
struct Pending {
    module: Arc<str>,
    kind: &'static str,
    shape: Vec<usize>,
    input_shape: Vec<usize>,
    stats: Tensor,
    cut: bool,
}

struct State {
    capacity: usize,
    step: usize,
    pending: Vec<Pending>,
    ring: VecDeque<Frame>,
    read_backs: usize,
}

thread_local! {
    /// Recorders alive on this thread, innermost last; frames go to the innermost.
    static STACK: RefCell<Vec<State>> = const { RefCell::new(Vec::new()) };
}

/// Records the output of every traced module on this thread while it is alive.
///
/// Start it, run forward/backward steps, call [`end_step`](Recorder::end_step) once per step:
/// that is the only device-to-host read. Dropping it stops recording. Recorders nest: a new
/// one takes the frames until it is dropped.
///
/// ```
/// use candle_core::{DType, Device, Module, Tensor};
/// use candle_nn::{VarBuilder, VarMap};
/// use mldebug_diagnostics::{nn, trace::Recorder};
///
/// # fn main() -> candle_core::Result<()> {
/// let varmap = VarMap::new();
/// let vb = VarBuilder::from_varmap(&varmap, DType::F32, &Device::Cpu);
/// let l1 = nn::linear(4, 8, vb.pp("l1"))?;
/// let l2 = nn::linear(8, 2, vb.pp("l2"))?;
///
/// let recorder = Recorder::start();
/// for step in 0..3 {
///     let mut x = Tensor::ones((2, 4), DType::F32, &Device::Cpu)?;
///     if step == 2 {
///         x = (x * f64::INFINITY)?; // what a diverging run feeds the model
///     }
///     let loss = l2.forward(&l1.forward(&x)?.relu()?)?.sum_all()?;
///     let _grads = loss.backward()?;
///     let summary = recorder.end_step()?;
///     if let Some(bad) = &summary.first_non_finite {
///         assert_eq!(bad.module, "l1");
///         assert_eq!(summary.frames_before.len(), 4); // l1, l2 of steps 0 and 1
///         for line in summary.frame_table() {
///             eprintln!("{line}");
///         }
///         break;
///     }
/// }
/// # Ok(())
/// # }
/// ```
pub struct Recorder {
    depth: usize,
    // Bound to the thread whose thread-local it owns.
    _not_send: PhantomData<*const ()>,
}

impl Recorder {
    /// Start recording on this thread with a ring of [`DEFAULT_CAPACITY`] frames.
    pub fn start() -> Recorder {
        Recorder::with_capacity(DEFAULT_CAPACITY)
    }

    /// Start recording with a ring of `capacity` frames (at least 1).
    pub fn with_capacity(capacity: usize) -> Recorder {
        let depth = STACK.with(|s| {
            let mut s = s.borrow_mut();
            s.push(State {
                capacity: capacity.max(1),
                step: 0,
                pending: Vec::new(),
                ring: VecDeque::with_capacity(capacity.max(1)),
                read_backs: 0,
            });
            s.len() - 1
        });
        Recorder {
            depth,
            _not_send: PhantomData,
        }
    }

    /// Runs `f` on this recorder's state; `None` once an outer recorder was dropped first.
    fn with_state<T>(&self, f: impl FnOnce(&mut State) -> T) -> Option<T> {
        STACK.with(|s| s.borrow_mut().get_mut(self.depth).map(f))
    }

    fn ended() -> candle_core::Error {
        candle_core::Error::Msg(
            "this recorder was ended by dropping a recorder started before it".to_string(),
        )
    }

    /// Close the current step: read back the statistics of every frame recorded since the last
    /// call (one device-to-host transfer), push them into the ring and summarise.
    pub fn end_step(&self) -> Result<StepSummary> {
        let pending = self
            .with_state(|s| std::mem::take(&mut s.pending))
            .ok_or_else(Recorder::ended)?;
        // The read-back happens outside the borrow: it may run candle ops.
        let rows = if pending.is_empty() {
            Vec::new()
        } else {
            let stats: Vec<&Tensor> = pending.iter().map(|p| &p.stats).collect();
            Tensor::stack(&stats, 0)?.to_vec2::<f32>()?
        };
        self.with_state(|s| {
            if !pending.is_empty() {
                s.read_backs += 1;
            }
            let mut summary = StepSummary {
                step: s.step,
                frames_recorded: pending.len(),
                first_non_finite: None,
                frames_before: Vec::new(),
                cuts: Vec::new(),
                max_abs: 0.0,
            };
            s.step += 1;
            for (p, row) in pending.into_iter().zip(rows) {
                let frame = Frame {
                    module: p.module.to_string(),
                    kind: p.kind,
                    shape: p.shape,
                    input_shape: p.input_shape,
                    abs_min: row[0],
                    abs_max: row[1],
                    non_finite: row[2] as usize,
                };
                if p.cut && !summary.cuts.contains(&frame.module) {
                    summary.cuts.push(frame.module.clone());
                }
                if frame.non_finite == 0 && frame.abs_max.is_finite() {
                    summary.max_abs = summary.max_abs.max(frame.abs_max);
                }
                if frame.non_finite > 0 && summary.first_non_finite.is_none() {
                    summary.frames_before = s.ring.iter().cloned().collect();
                    let keep = s.capacity - 1;
                    if summary.frames_before.len() > keep {
                        summary
                            .frames_before
                            .drain(..summary.frames_before.len() - keep);
                    }
                    summary.first_non_finite = Some(frame.clone());
                }
                if s.ring.len() == s.capacity {
                    s.ring.pop_front();
                }
                s.ring.push_back(frame);
            }
            summary
        })
        .ok_or_else(Recorder::ended)
    }

    /// The ring as of the last [`end_step`](Recorder::end_step), oldest first.
    pub fn frames(&self) -> Vec<Frame> {
        self.with_state(|s| s.ring.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Frames recorded since the last `end_step`, not yet read back.
    pub fn pending(&self) -> usize {
        self.with_state(|s| s.pending.len()).unwrap_or(0)
    }

    /// How many device-to-host reads this recorder has made (at most one per `end_step`).
    pub fn read_backs(&self) -> usize {
        self.with_state(|s| s.read_backs).unwrap_or(0)
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        // Dropping an outer recorder before an inner one ends both: the inner one's `end_step`
        // then returns an error.
        STACK.with(|s| s.borrow_mut().truncate(self.depth));
    }
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("depth", &self.depth)
            .finish()
    }
}

/// True when a [`Recorder`] is alive on this thread.
pub fn is_recording() -> bool {
    STACK.with(|s| !s.borrow().is_empty())
}

/// Record `output` of the module `module` (of kind `kind`) if a recorder is alive on this thread.
///
/// `input` is the module's input when it has one tensor input: if it depends on a parameter and
/// `output` does not, the module cut the gradient and the frame says so. The traced wrappers in
/// [`crate::nn`] call this; call it yourself for anything else you want in the frames (the loss,
/// an attention matrix). The statistics are computed on the device; nothing is read back here.
pub fn record(
    module: &str,
    kind: &'static str,
    input: Option<&Tensor>,
    output: &Tensor,
) -> Result<()> {
    if !is_recording() {
        return Ok(());
    }
    record_arc(module.into(), kind, input, output)
}

pub(crate) fn record_arc(
    module: Arc<str>,
    kind: &'static str,
    input: Option<&Tensor>,
    output: &Tensor,
) -> Result<()> {
    if !is_recording() {
        return Ok(());
    }
    let cut = input.is_some_and(|x| x.track_op()) && !output.track_op();
    let stats = frame_stats(output)?;
    let frame = Pending {
        module,
        kind,
        shape: output.dims().to_vec(),
        input_shape: input.map(|x| x.dims().to_vec()).unwrap_or_default(),
        stats,
        cut,
    };
    STACK.with(|s| {
        if let Some(state) = s.borrow_mut().last_mut() {
            state.pending.push(frame);
        }
    });
    Ok(())
}
