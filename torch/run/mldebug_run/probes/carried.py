"""Were gradients carried over from one optimizer step into the next (no `zero_grad`)?

Found without reading values: after each step the optimizer's gradients are remembered by weak
reference and version counter. A gradient is "reset" when, at a backward call (or at the step),
it is None, another tensor, or was written in place since the last look
(`zero_grad(set_to_none=False)`; on heavy steps such a write counts only if it left zeros). A
tensor that reaches the next step with a gradient never reset since the previous step was
carried. Only looks until every tensor is resolved, so correct accumulation (zero_grad, k
backwards, step) costs one look per step; and a GAN's generator backward reaching the
discriminator's gradients before `netD.zero_grad()` is not mistaken for carrying.

What it never does: hold a gradient (weak references only) or read a value outside heavy steps.
"""

import weakref

from .. import state as _state
from ..state import HEAVY_STEPS, probe
from .tensors import norms, to_floats


def _tensors(opt):
    return [p for group in opt.param_groups for p in group["params"] if not p.is_meta]


def _grad_look(p):
    g = p.grad
    return None if g is None else (weakref.ref(g), g._version)


def snapshot(entry, tensors):
    entry.after_step = [_grad_look(p) for p in tensors]
    entry.reset = [None] * len(tensors)
    entry.unresolved = True


def forget(entry):
    """No look until the next snapshot: the next step is not measured (cadence.py)."""
    entry.after_step = None
    entry.unresolved = False


def observe(entry, tensors, at_step=False, verify=False):
    """Mark gradients reset since the last look (see the module docs). With `verify` (heavy
    steps), a gradient written in place counts as reset only if it is all zero."""
    last, reset = entry.after_step, entry.reset
    if last is None or not entry.unresolved:
        return
    written, pending = [], False
    for i, p in enumerate(tensors[:len(last)]):
        if reset[i] is not None:
            continue
        g, before = p.grad, last[i]
        if g is None:
            if before is not None or not at_step:
                reset[i] = "none"
        elif before is None or before[0]() is not g:
            reset[i] = "none" if at_step else "zeroed"  # at a step: a gradient assigned anew
            if not at_step:
                written.append((i, g))
        elif g._version != before[1] and not at_step:
            reset[i] = "zeroed"
            written.append((i, g))
        else:
            pending = True
    if verify and written:
        for (i, _), size in zip(written, to_floats(norms([g for _, g in written]))):
            if size != 0.0:
                reset[i] = None  # written but not zeroed (scaled, clipped): not a reset
                pending = True
    entry.unresolved = pending


@probe("optimizer")
def before_backward():
    """At every backward call: look at the gradients of optimizers not yet resolved."""
    for entry in _state.STATE.stepped:
        opt = entry.ref()
        if opt is not None and entry.unresolved:
            observe(entry, _tensors(opt), verify=entry.steps < HEAVY_STEPS)


@probe("optimizer")
def after_backward():
    """After a backward: what it left is the reference for the next look."""
    for entry in _state.STATE.stepped:
        opt = entry.ref()
        if opt is not None and entry.unresolved and entry.after_step is not None:
            entry.after_step = [_grad_look(p) if r is None else look for p, r, look
                                in zip(_tensors(opt), entry.reset, entry.after_step)]


def before_step(entry, tensors):
    """grads_before_backward and the number of carried tensors, at the step pre-hook."""
    if entry.steps == 0 or entry.after_step is None:
        return "unknown", None
    observe(entry, tensors, at_step=True)
    carried = sum(1 for p, r in zip(tensors, entry.reset) if r is None and p.grad is not None)
    if carried:
        return "carried", carried
    return ("zeroed" if "zeroed" in entry.reset else "none"), 0
