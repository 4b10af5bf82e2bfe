"""Gradient clipping: each call of `torch.nn.utils.clip_grad_norm_` / `clip_grad_value_`
(patches.py wraps both), kept until the step of the optimizer (or hand-written update) whose
tensors it clipped, and written on that `step` record as `clips`: the threshold, the norm the
call returned (the clipped gradients' total norm before the clip, as the call saw them), and
whether those gradients were still multiplied by a `torch.amp.GradScaler`'s scale.

Scaled gradients: at the clip, a GradScaler had scaled a loss since its last `update()` and
had not unscaled this optimizer's gradients since; and at the optimizer's step, that scaler had
unscaled them (`unscale_`, which its `step` calls), so the optimizer is one the scaler steps
(an optimizer stepped without the scaler has gradients no scale multiplied). The per-optimizer
stage is read from the scaler's own `_per_optimizer_states` (OptState READY / UNSCALED /
STEPPED), and where that private state cannot be read, from the `unscale_` calls the wrappers
saw. The scale is the scaler's scale tensor at the clip.

What it never does: change a gradient or what a clip returns, or read a value back on its own:
the norm and the scale are kept as 0-d copies and read with the step's other values.
"""

import functools
import sys
import weakref

from .. import state as _state
from ..state import compiling_check, probe

CLIPS_KEPT = 8  # calls waiting for their step: a loop that clips but never steps stays small


class _Marks:
    """What one GradScaler did since its last update()."""

    def __init__(self):
        self.scaled = False
        self.unscaled = set()  # id(optimizer)


_scalers = weakref.WeakKeyDictionary()  # GradScaler -> _Marks


def _marks(scaler):
    marks = _scalers.get(scaler)
    if marks is None:
        marks = _scalers[scaler] = _Marks()
    return marks


@probe("clip")
def scaled(scaler):
    """GradScaler.scale returned a scaled loss."""
    _marks(scaler).scaled = True


@probe("clip")
def unscaled(scaler, optimizer):
    """GradScaler.unscale_(optimizer) returned."""
    _marks(scaler).unscaled.add(id(optimizer))


@probe("clip")
def updated(scaler):
    """GradScaler.update() returned: the next scale starts a new iteration."""
    marks = _marks(scaler)
    marks.scaled = False
    marks.unscaled.clear()


def _wrap(fn, kind):
    # Closure variables only: patches.py runs this with the globals of the clip's module.
    state, record, compiling = _state, called, compiling_check()
    tensor = sys.modules["torch"].Tensor
    generator = type(x for x in ())

    @functools.wraps(fn)
    def clip(parameters, threshold, *args, **kwargs):
        st = state.STATE
        if st is None or compiling() or not st.measuring:  # an unmeasured step: no record
            return fn(parameters, threshold, *args, **kwargs)
        if isinstance(parameters, tensor):
            listed = [parameters]
        else:  # the clip lists them itself: a generator is read once, here, and passed on
            listed = list(parameters)
            parameters = (p for p in listed) if isinstance(parameters, generator) else listed
        out = fn(parameters, threshold, *args, **kwargs)
        record(kind, listed, threshold, out, args, kwargs)
        return out

    return clip


def wrap_norm(fn):
    return _wrap(fn, "norm")


def wrap_value(fn):
    return _wrap(fn, "value")


def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


@probe("clip")
def called(kind, params, threshold, out, args, kwargs):
    st = _state.STATE
    torch = sys.modules["torch"]
    ids = {id(p) for p in params}
    norm_type = None
    if kind == "norm":
        norm_type = _number(args[0] if args else kwargs.get("norm_type", 2.0))
    scaler, scale = _scaling(_optimizer_of(st, ids))
    with torch.no_grad():  # plain 0-d tensors only: a DTensor's norm is not read back here
        norm = out.detach().clone() if type(out) is torch.Tensor and out.numel() == 1 else None
        scale = scale.detach().clone() if type(scale) is torch.Tensor else None
    call = {"kind": kind, "threshold": _number(threshold), "norm_type": norm_type,
            "tensors": len(ids)}
    st.clips.append((ids, call, norm, scale, scaler))
    del st.clips[:-CLIPS_KEPT]


def _optimizer_of(st, ids):
    """The first optimizer built that holds any of the clipped tensors, or None."""
    for entry in list(st.optimizers.values()):
        opt = entry.ref()
        if opt is not None and any(id(p) in ids for g in opt.param_groups for p in g["params"]):
            return opt
    return None


def _stage(scaler, opt):
    """The scaler's stage for the optimizer (READY, UNSCALED, STEPPED), None when it has none
    yet, or "?" when its private state cannot be read."""
    try:
        stage = scaler._per_optimizer_states.get(id(opt))
        return None if stage is None else stage["stage"].name
    except Exception:
        return "?"


def _unscaled(scaler, opt, marks):
    stage = _stage(scaler, opt)
    if stage == "?":
        return id(opt) in marks.unscaled
    return stage in ("UNSCALED", "STEPPED")


def _scaling(opt):
    """(a weak reference to the GradScaler whose scale still multiplies the optimizer's
    gradients, its scale tensor), or (None, None)."""
    if opt is None:
        return None, None
    for scaler, marks in list(_scalers.items()):
        if not marks.scaled or not getattr(scaler, "_enabled", True):
            continue
        if not _unscaled(scaler, opt, marks):
            return weakref.ref(scaler), getattr(scaler, "_scale", None)
    return None, None


@probe("clip")
def take(opt, tensors):
    """The calls waiting that clipped any of `tensors` (they leave the queue), as
    [(call, [0-d tensors to read], has norm, has scale)]; `opt` is the optimizer stepping
    (None for a hand-written update)."""
    st = _state.STATE
    if not st.clips:
        return []
    mine = {id(p) for p in tensors}
    taken, left = [], []
    for c in st.clips:
        (taken if c[0] & mine else left).append(c)
    st.clips[:] = left
    out = []
    for _, call, norm, scale, ref in taken:
        scaler = ref() if ref is not None else None
        # Scaled at the clip, and unscaled by that scaler by now: a loss it scaled reached them.
        scaled = (scaler is not None and opt is not None
                  and _unscaled(scaler, opt, _marks(scaler)))
        if not scaled:
            scale = None
        call = dict(call, scaled=scaled)
        out.append((call, [t for t in (norm, scale) if t is not None], norm is not None,
                    scale is not None))
    return out


def values(taken):
    return [t for _, kept, _, _ in taken or () for t in kept]


@probe("clip")
def fill(record, taken, floats):
    """The `clips` field of a step record, from `take` and the values read back."""
    if not taken:
        return
    out, it = [], iter(floats)
    for call, _, has_norm, has_scale in taken:
        call = dict(call)
        call["norm"] = next(it) if has_norm else None
        call["scale"] = next(it) if has_scale else None
        out.append(call)
    record["clips"] = out
