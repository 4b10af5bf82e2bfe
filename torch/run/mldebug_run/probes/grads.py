"""Per-model gradient picture on heavy steps: one `grads` record per root model that shares
tensors with the optimizer that stepped, written right after its step.

Parameters are grouped by their module path cut to its first GROUP_DEPTH names
(`transformer.h.0.attn.c_attn.weight` -> `transformer.h.0`; `fc1.weight` -> `fc1`), at most
GROUPS_MAX groups in creation order (the rest in "(other)"). Per group: tensors, trainable
tensors without a gradient, with an all-zero gradient, the gradient, weight and update norms
(and the weight norm before the step, for the update's size relative to it), frozen tensors. Lists of names (at most NAMES_MAX each): trainable parameters of the optimizer
without a gradient, trainable parameters with a gradient that no optimizer constructed so far
holds, frozen parameters.

What it never does: change a gradient, or run on light steps.
"""

import math
import sys

from .. import state as _state
from ..state import probe
from .tensors import measured_gradient, norms, sums64, to_floats

GROUP_DEPTH = 3  # `transformer.h.0`: deep enough to tell layers apart
GROUPS_MAX = 64  # a record stays a few kB even for a 100-layer model
NAMES_MAX = 50


def group_of(name):
    parts = name.split(".")[:-1]
    return ".".join(parts[:GROUP_DEPTH]) or "(root)"


def _all_optimizer_ids():
    ids = set()
    for entry in _state.STATE.optimizers.values():
        opt = entry.ref()
        if opt is not None:
            ids.update(id(p) for g in opt.param_groups for p in g["params"])
    return ids


@probe("grads")
def write_records(opt_entry, tensors, updates, kept=None):
    """`kept`: id(parameter) -> its gradient as the backward left it, for an update written by
    hand (probes/manual.py), whose gradients are reset before these records are written."""
    st = _state.STATE
    torch = sys.modules["torch"]
    mine = {id(p) for p in tensors}
    held = None
    for entry in st.model_list:
        inner = entry.inner()
        if inner is None:
            continue
        named = [(n, p) for n, p in inner.named_parameters() if not p.is_meta]
        if not any(id(p) in mine for _, p in named):
            continue
        if held is None:
            held = _all_optimizer_ids()
        with torch.no_grad():
            _write_one(st, entry, opt_entry, named, mine, held, updates, _grad_of(kept))


def _grad_of(kept):
    """The gradient of a parameter as it is measured (a sparse one as its values)."""
    if kept is None:
        return lambda p: measured_gradient(p.grad)
    return lambda p: measured_gradient(kept.get(id(p)))


def _write_one(st, entry, opt_entry, named, mine, held, updates, grad_of):
    with_grad = [grad_of(p) for _, p in named if grad_of(p) is not None]
    n, m = len(named), len(with_grad)
    values = to_floats(norms([p.detach() for _, p in named]) + norms(with_grad)
                       + sums64([p.detach() for _, p in named]) + sums64(with_grad))
    weight_norm, grad_norm = values[:n], iter(values[n:n + m])
    weight_sum, grad_sum = values[n + m:2 * n + m], iter(values[2 * n + m:])
    groups, no_grad, not_in_opt, frozen = {}, [], [], []
    not_in_opt_numel = 0
    for (name, p), w, ws in zip(named, weight_norm, weight_sum):
        key = group_of(name)
        if key not in groups and len(groups) >= GROUPS_MAX:
            key = "(other)"
        g = groups.setdefault(key, {"name": key, "tensors": 0, "no_grad": 0, "zero_grad": 0,
                                    "grad_sq": 0.0, "weight_sq": 0.0, "update_sq": 0.0,
                                    "before_sq": 0.0,
                                    "frozen": 0, "param_sum": 0.0, "grad_sum": 0.0})
        g["tensors"] += 1
        g["weight_sq"] += w * w
        g["param_sum"] += ws
        has_grad = grad_of(p) is not None
        gn = next(grad_norm) if has_grad else None
        if gn is not None:
            g["grad_sq"] += gn * gn
            g["grad_sum"] += next(grad_sum)
        u = updates.get(id(p))
        if u is not None:
            g["update_sq"] += u[0] * u[0]
            g["before_sq"] += u[1] * u[1]
        else:
            g["before_sq"] += w * w  # not this optimizer's: the step left it as it was
        if not p.requires_grad:
            g["frozen"] += 1
            frozen.append(name)
        elif id(p) in mine:
            if gn is None:
                g["no_grad"] += 1
                no_grad.append(name)
            elif gn == 0.0:
                g["zero_grad"] += 1
        elif gn is not None and id(p) not in held:
            not_in_opt.append(name)
            not_in_opt_numel += p.numel()
    out = []
    for g in groups.values():
        out.append({"name": g["name"], "tensors": g["tensors"], "no_grad": g["no_grad"],
                    "zero_grad": g["zero_grad"], "grad_norm": math.sqrt(g["grad_sq"]),
                    "weight_norm": math.sqrt(g["weight_sq"]),
                    "update_norm": math.sqrt(g["update_sq"]),
                    "weight_norm_before": math.sqrt(g["before_sq"]), "frozen": g["frozen"],
                    "param_sum": g["param_sum"], "grad_sum": g["grad_sum"]})
    st.emit("grads", step=opt_entry.steps, optimizer=opt_entry.index, model=entry.index,
            groups=out, no_grad=no_grad[:NAMES_MAX], no_grad_count=len(no_grad),
            not_in_optimizer=not_in_opt[:NAMES_MAX], not_in_optimizer_numel=not_in_opt_numel,
            frozen_names=frozen[:NAMES_MAX], frozen_count=len(frozen))
