"""Memory at the stage boundaries of the heavy steps: where a step's memory goes (forward,
backward, optimizer step), as the `memory_stages` object of optimizer 0's `step` record.

Five points per interval, each taken once (the first time it is reached):
  forward       the first root forward with gradients enabled begins
  backward      the first `backward` call begins (the forward's activations are held)
  backward_end  that `backward` call returns
  step          optimizer 0's `step` begins, after the probes' own before-step copies
  step_end      optimizer 0's `step` returns, before the probes compare anything

At each: the resident set and its peak so far on every device, and on CUDA the allocator's
`memory_allocated`, `max_memory_allocated` and `memory_reserved`. The peaks are peaks so far:
the judge reads a stage's rise of the peak as the difference between its two ends.

What it never does: reset the allocator's peak (the program may read it), synchronise the
device, allocate on it, or run after the heavy steps.
"""

from .. import models
from .. import state as _state
from ..state import probe
from . import memory

POINTS = ("forward", "backward", "backward_end", "step", "step_end")


def _device():
    for entry in _state.STATE.model_list:
        inner = entry.inner()
        if inner is not None:
            return models.device_of(inner)
    return None


@probe("stages")
def mark(point):
    """Memory now, as `point` of the current interval, unless it was taken already."""
    st = _state.STATE
    if st.ended or not st.heavy:
        return
    iv = st.interval
    if iv.stages is None:
        iv.stages = {}
    if point not in iv.stages:
        iv.stages[point] = memory.snapshot(_device())


def take():
    """The interval's points so far (None off the heavy steps), for the step record."""
    return _state.STATE.interval.stages
