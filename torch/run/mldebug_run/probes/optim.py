"""Optimizer steps: the `optimizer` record (at its first step) and one `step` record per step.

Every step: the gradients' total norm (one fused norm per device and dtype, one read), how many
tensors have a gradient, whether gradients were carried over from the previous step, the loss,
timings, memory. Heavy steps (each optimizer's first HEAVY_STEPS): a copy of its tensors before
the step (a strided sample of each when they exceed COPY_BYTES_MAX) to count the tensors the
step changed and the size of the update, and the `grads` records. Checksums (float64 sums of
the tensors after the step and of their gradients before it) on heavy steps and every
CHECKSUM_EVERY steps, for ranks to compare.

Carried gradients are found without reading values: a gradient is "reset" when, at a backward
call (or at the step), it is None, another tensor, or was written in place since the last look
(`zero_grad(set_to_none=False)`); a tensor that reaches the next step with a gradient never
reset since the previous step was carried. Looking only at version counters and identities
keeps this free on every step, and a GAN's generator backward reaching the discriminator's
gradients before `netD.zero_grad()` is not mistaken for carrying.

What it never does: hold a gradient (weak references only), change a tensor, or synchronise the
device more than once per step outside heavy steps.
"""

import math
import sys
import weakref

from .. import models
from .. import state as _state
from ..state import HEAVY_STEPS, probe
from ..where import where
from . import data, grads, memory, nonfinite
from .tensors import dense, norms, sample, sums64, to_floats

COPY_BYTES_MAX = 512 << 20  # full before-step copies up to 512 MiB; beyond, strided samples
CHECKSUM_EVERY = 10  # light steps with checksums: ranks compare a few, not every step


def tensors_of(opt):
    return [p for group in opt.param_groups for p in group["params"]]


def _entry(opt):
    st = _state.STATE
    entry = st.optimizers.get(id(opt))
    if entry is None or entry.ref() is not opt:
        entry = _state.OptimizerEntry(weakref.ref(opt), None)
        st.optimizers[id(opt)] = entry
    return entry


@probe("optimizer")
def constructed(opt):
    """Optimizer.__init__ finished: remember where, and start the trace."""
    entry = _state.OptimizerEntry(weakref.ref(opt), where(3))
    _state.STATE.optimizers[id(opt)] = entry
    device = next((str(p.device) for p in tensors_of(opt)), None)
    _state.STATE.open_trace(device)


def _grad_look(p):
    g = p.grad
    return None if g is None else (weakref.ref(g), g._version)


def _snapshot(entry, tensors):
    entry.after_step = [_grad_look(p) for p in tensors]
    entry.reset = [None] * len(tensors)
    entry.unresolved = True


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
            observe(entry, tensors_of(opt), verify=entry.steps < HEAVY_STEPS)


@probe("optimizer")
def after_backward():
    """After a backward: what it left is the reference for the next look."""
    for entry in _state.STATE.stepped:
        opt = entry.ref()
        if opt is not None and entry.unresolved and entry.after_step is not None:
            entry.after_step = [_grad_look(p) if r is None else look for p, r, look
                                in zip(tensors_of(opt), entry.reset, entry.after_step)]


def _before(entry, tensors):
    """grads_before_backward and the number of carried tensors, at the step pre-hook."""
    if entry.steps == 0 or entry.after_step is None:
        return "unknown", None
    observe(entry, tensors, at_step=True)
    carried = sum(1 for p, r in zip(tensors, entry.reset) if r is None and p.grad is not None)
    if carried:
        return "carried", carried
    return ("zeroed" if "zeroed" in entry.reset else "none"), 0


def _optimizer_record(entry, opt, tensors):
    st = _state.STATE
    in_model = models.model_parameters()
    numel_in = sum(p.numel() for p in tensors if id(p) in in_model)
    numel = sum(p.numel() for p in tensors)
    groups = [{"tensors": len(g["params"]), "numel": sum(p.numel() for p in g["params"]),
               "lr": _number(g.get("lr")), "weight_decay": _number(g.get("weight_decay"))}
              for g in opt.param_groups]
    st.emit("optimizer", step=st.step, optimizer=entry.index, **{"class": type(opt).__name__},
            where=entry.where, tensors=len(tensors), numel=numel, in_models=numel_in,
            not_in_models=numel - numel_in, groups=groups)


def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


@probe("optimizer")
def step_pre(opt, args, kwargs):
    st = _state.STATE
    torch = sys.modules["torch"]
    entry = _entry(opt)
    if entry.index is None:
        entry.index = len(st.stepped)
        st.stepped.append(entry)
        st.open_trace(next((str(p.device) for p in tensors_of(opt)), None))
        _optimizer_record(entry, opt, tensors_of(opt))
    tensors = tensors_of(opt)
    before, carried = _before(entry, tensors)
    heavy = entry.steps < HEAVY_STEPS
    checksum = heavy or (entry.steps + 1) % CHECKSUM_EVERY == 0
    with torch.no_grad():
        with_grad = [p for p in tensors if p.grad is not None and dense(p.grad)]
        grad_norms = norms([p.grad for p in with_grad])
        pre = {"before": before, "carried": carried, "heavy": heavy, "checksum": checksum,
               "with_grad": len(with_grad), "without_grad": len(tensors) - len(with_grad),
               "grad_sq": _per_device_total([n * n for n in grad_norms]),
               "grad_sum": _per_device_total(sums64([p.grad for p in with_grad])) if checksum else None,
               "with_grad_tensors": with_grad, "grad_norms": grad_norms}
        if heavy:
            pre["copies"], pre["sampled"] = _copies(tensors)
    entry.heavy = pre


def _per_device_total(values):
    by_device = {}
    for v in values:
        by_device.setdefault(v.device, []).append(v)
    return [_sum(vs) for vs in by_device.values()]


def _sum(values):
    torch = sys.modules["torch"]
    return torch.stack([v.to(torch.float64) if v.device.type != "mps" else v for v in values]).sum()


def _copies(tensors):
    total = sum(p.numel() * p.element_size() for p in tensors)
    sampled = total > COPY_BYTES_MAX
    return [(sample(p) if sampled else p.detach()).clone() for p in tensors], sampled


def _compare(tensors, copies, sampled):
    """Per tensor: changed (0-d bool), ‖Δw‖ and ‖w before‖ (0-d float32), all on device."""
    torch = sys.modules["torch"]
    changed, deltas, weights = [], [], []
    for p, before in zip(tensors, copies):
        now = sample(p) if sampled else p.detach()
        changed.append((now != before).any())
        diff = now.to(torch.float32) - before.to(torch.float32)
        deltas.append(torch.linalg.vector_norm(diff))
        weights.append(torch.linalg.vector_norm(before, dtype=torch.float32)
                       if before.is_floating_point() else torch.linalg.vector_norm(before.float()))
    return changed, deltas, weights


@probe("optimizer")
def step_post(opt, args, kwargs):
    st = _state.STATE
    torch = sys.modules["torch"]
    entry = _entry(opt)
    pre, entry.heavy = entry.heavy, None
    if pre is None:
        return
    tensors = tensors_of(opt)
    entry.steps += 1
    primary = entry.index == 0
    if primary:
        st.steps += 1
    values = []  # 0-d tensors read back together: one synchronisation per device
    with torch.no_grad():
        values.extend(pre["grad_sq"])
        n_sq = len(values)
        if pre["grad_sum"] is not None:
            values.extend(pre["grad_sum"])
            values.extend(_per_device_total(sums64([p.detach() for p in tensors])))
        n_sums = len(values)
        if pre["heavy"]:
            changed, deltas, weights = _compare(tensors, pre["copies"], pre["sampled"])
            values.extend(changed + deltas + weights)
    floats = to_floats(values)
    grad_norm = math.sqrt(sum(floats[:n_sq])) if n_sq else None
    record = _step_record(entry, opt, pre, grad_norm)
    if pre["grad_sum"] is not None:
        half = (n_sums - n_sq) // 2
        record["grad_checksum"] = sum(floats[n_sq:n_sq + half])
        record["param_checksum"] = sum(floats[n_sq + half:n_sums])
    if grad_norm is not None and not math.isfinite(grad_norm):
        bad = to_floats(pre["grad_norms"])
        nonfinite.gradient(pre["with_grad_tensors"], bad)
    updates = _heavy_fields(record, tensors, pre, floats[n_sums:]) if pre["heavy"] else None
    _snapshot(entry, tensors)
    st.emit("step", **record)
    if updates is not None:
        grads.write_records(entry, tensors, updates)
    data.note_step()
    st.interval = _state.Interval(st.now())
    if primary and st.limit and st.steps >= st.limit:
        from .. import stop

        stop.finish("steps")


def _step_record(entry, opt, pre, grad_norm):
    st = _state.STATE
    iv = st.interval
    now = st.now()
    start = iv.start if iv.start is not None else st.first_forward
    lr = opt.param_groups[0].get("lr") if opt.param_groups else None
    return {
        "step": entry.steps, "optimizer": entry.index, "time": now,
        "step_s": None if start is None else now - start, "data_wait_s": iv.data_wait,
        "forwards": iv.forwards, "nograd_forwards": iv.nograd_forwards,
        "backwards": iv.backwards, "loss": iv.loss, "lr": _number(lr),
        "training": iv.training, "grads_before_backward": pre["before"],
        "grads_carried": pre["carried"], "grad_norm": grad_norm,
        "with_grad": pre["with_grad"], "without_grad": pre["without_grad"],
        "changed": None, "checked": None, "update_ratio": None, "update_sampled": None,
        "memory": memory.memory_record(_first_device()),
        "batch": iv.batch.hexdigest() if iv.batch is not None else None,
        "param_checksum": None, "grad_checksum": None,
    }


def _heavy_fields(record, tensors, pre, floats):
    n = len(tensors)
    changed, deltas, weights = floats[:n], floats[n:2 * n], floats[2 * n:3 * n]
    record["changed"] = sum(1 for c in changed if c)
    record["checked"] = n
    d2, w2 = sum(d * d for d in deltas), sum(w * w for w in weights)
    record["update_ratio"] = math.sqrt(d2) / math.sqrt(w2) if w2 > 0 else None
    record["update_sampled"] = pre["sampled"]
    return {id(p): d for p, d in zip(tensors, deltas)}


def _first_device():
    for entry in _state.STATE.model_list:
        inner = entry.inner()
        if inner is not None:
            return models.device_of(inner)
    return None
