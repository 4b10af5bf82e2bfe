"""Where a NaN or inf first appeared: `nonfinite` records, at most one per phase.

  loss       the tensor `backward` was called on is not finite (checked at every backward: its
             value is read anyway for the step record); this arms the forward check and looks
             at the parameters once
  parameter  the first parameter (in model order) whose values are not finite, looked for when
             the loss first is not (`when: "at_loss"`: a diverged model, not a bad batch) and
             after the first step taken with a non-finite loss or gradient (`"after_step"`:
             that step wrote NaN into the weights)
  forward    with the check armed, the first module whose output is not finite, in the order
             modules finish, during the next root forward (one forward only: it reads every
             module's output), with whether its inputs and its own parameters were finite
  gradient   the first optimizer tensor whose gradient norm is not finite at a step (the norms
             are computed for the step record anyway; a GradScaler that skips such a step
             never reaches the optimizer, so mixed-precision overflow is not reported)

What it never does: change a value, or check anything while not armed beyond the loss.
"""

import math
import sys

from .. import models
from .. import state as _state
from ..state import probe
from ..where import user_frames
from .tensors import tensors_in


def _once(phase):
    st = _state.STATE
    if ("nonfinite", phase) in st.reported:
        return False
    st.reported.add(("nonfinite", phase))
    return True


@probe("nonfinite")
def loss_value(value):
    """At a backward whose loss value is `value` (a float or None)."""
    if value is None or math.isfinite(value) or not _once("loss"):
        return
    st = _state.STATE
    st.emit("nonfinite", step=st.step, phase="loss", value=value, module=None,
            **{"class": None}, frames=user_frames(3))
    st.check_forward = "forward" not in {k[1] for k in st.reported if k[0] == "nonfinite"}
    first_bad_parameter("at_loss")


@probe("nonfinite")
def after_step(loss, grad_norm):
    """After a step: one taken with a non-finite loss or gradient may have corrupted weights."""
    bad = [v for v in (loss, grad_norm) if v is not None and not math.isfinite(v)]
    if bad and ("nonfinite", "parameter") not in _state.STATE.reported:
        first_bad_parameter("after_step")


def first_bad_parameter(when):
    torch = sys.modules["torch"]
    st = _state.STATE
    with torch.no_grad():
        for entry in st.model_list:
            inner = entry.inner()
            if inner is None:
                continue
            for name, p in inner.named_parameters():
                if p.is_floating_point() and not bool(torch.isfinite(p).all()):
                    if _once("parameter"):
                        st.emit("nonfinite", step=st.step, phase="parameter", module=name,
                                **{"class": type(p).__name__}, frames=[], when=when)
                    return


@probe("nonfinite")
def check_output(module, args, result):
    """With the check armed: is this module's output finite? (called for every module)"""
    torch = sys.modules["torch"]
    st = _state.STATE
    with torch.no_grad():
        if _all_finite(torch, tensors_in(result)):
            return
        st.check_forward = False
        if _once("forward"):
            st.emit("nonfinite", step=st.step, phase="forward", module=models.name_of(module),
                    **{"class": type(module).__name__}, frames=user_frames(3),
                    inputs_finite=_all_finite(torch, tensors_in(args)),
                    parameters_finite=_all_finite(torch, module.parameters()))


def _all_finite(torch, tensors):
    return all(bool(torch.isfinite(t).all()) for t in tensors
               if t.is_floating_point() or t.is_complex())


@probe("nonfinite")
def gradient(tensors, norm_values):
    """At a step: the first tensor whose gradient norm is not finite."""
    for p, n in zip(tensors, norm_values):
        if n is not None and not math.isfinite(n):
            if _once("gradient"):
                st = _state.STATE
                st.emit("nonfinite", step=st.step, phase="gradient",
                        module=models.name_of(p), **{"class": type(p).__name__}, frames=[])
            return
