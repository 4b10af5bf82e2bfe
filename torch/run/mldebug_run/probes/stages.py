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

On the same heavy steps, the first root forward with gradients enabled leaves its main input's
shape and dtype, and the autocast dtype it ran under, as the step record's `input` object: what
an estimate of the run's memory needs (batch, sequence length, precision).

What it never does: reset the allocator's peak (the program may read it), synchronise the
device, allocate on it, or run after the heavy steps.
"""

import sys

from .. import models
from .. import state as _state
from ..state import probe
from . import memory

POINTS = ("forward", "backward", "backward_end", "step", "step_end")
# Keyword arguments that hold a model's main input, in the order looked for (transformers'
# names): the batch and sequence length of a language model are those of its input_ids.
INPUT_KEYS = ("input_ids", "inputs_embeds", "input_values", "input_features", "pixel_values")


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


def device_type(entry):
    """`cuda`, `cpu`, ... of the model's parameters, or None."""
    try:
        device = models.device_of(entry.inner())
        return device.split(":")[0] if device else None
    except Exception:
        return None


def autocast_now(device_type):
    """The dtype autocast casts to on `device_type` now (`bfloat16`), or None when it is off."""
    if device_type is None:
        return None
    torch = sys.modules["torch"]
    try:
        if not torch.is_autocast_enabled(device_type):
            return None
        return str(torch.get_autocast_dtype(device_type)).replace("torch.", "")
    except Exception:
        return None


def _main_input(args, kwargs):
    torch = sys.modules["torch"]
    for key in INPUT_KEYS:
        if isinstance(kwargs.get(key), torch.Tensor):
            return key, kwargs[key]
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            return str(i), a
    for key in sorted(k for k in kwargs if isinstance(k, str)):
        if isinstance(kwargs[key], torch.Tensor):
            return key, kwargs[key]
    return None


@probe("input")
def note_input(entry, args, kwargs, autocast):
    """The interval's first training forward: its main input (the first of INPUT_KEYS given,
    else the first tensor argument, else the first tensor keyword in name order)."""
    iv = _state.STATE.interval
    if iv.input is not None:
        return
    found = _main_input(args, kwargs or {})
    if found is None:
        return
    name, t = found
    iv.input = {"model": entry.index, "argument": name, "shape": [int(d) for d in t.shape],
                "dtype": str(t.dtype).replace("torch.", ""), "autocast": autocast}
