"""Optimizer steps: the `optimizer` record (at its first step) and one `step` record per step.

Every step: the gradients' total norm (one fused norm per device and dtype, one read), how many
tensors have a gradient, whether gradients were carried over from the previous step, the loss,
timings, memory, and whether the step changed its LIGHT_TENSORS largest tensors (a strided
sample of each). Heavy steps (each optimizer's first HEAVY_STEPS): a copy of all its tensors
before the step (a strided sample of each when they exceed COPY_BYTES_MAX) to count the tensors
the step changed and the size of the update, and the `grads` records. Checksums (float64 sums of
the tensors after the step and of their gradients before it) on heavy steps and every
measured step whose number CHECKSUM_EVERY divides, for ranks to compare. Light
steps the cadence leaves unmeasured (cadence.py) write a short `step` record (`count_post`).

A closure optimizer (`opt.step(closure)`, LBFGS) runs its forwards and backwards inside the
step: they belong to that step's interval, and its gradients are read after the step (before
it, they are the previous step's); whether they were carried is then unknown. The `optimizer`
record is written at the end of the first step, once a closure's forward has shown the model.
Tensors on the meta device (no data) are left out of every comparison, norm and checksum.

Whether gradients were carried over from the previous step: probes/carried.py. Updates written
by hand (no optimizer): probes/manual.py, which measures its steps with the functions here.

What it never does: hold a gradient (weak references only), change a tensor, or synchronise the
device more than once per step outside heavy steps.
"""

import math
import sys
import time
import weakref

from .. import models
from .. import state as _state
from .. import window
from ..state import HEAVY_STEPS, probe
from ..where import where
from . import clip
from . import groups as _groups
from . import adapters, batchnorm, carried, data, grads, losses, memory, nonfinite, stages, syncs
from .tensors import (FINGERPRINT_ELEMENTS, measured_gradient, norms, sample, stack_as, sums64,
                      to_floats)

COPY_BYTES_MAX = 512 << 20  # full before-step copies up to 512 MiB; beyond, strided samples
LIGHT_TENSORS = 4  # light steps compare the largest few tensors: a schedule that reaches lr 0
LIGHT_ELEMENTS = 4096  # ...on a strided sample each, a handful of small copies per step
CHECKSUM_EVERY = 8  # measured light steps whose number it divides have checksums (ranks compare)


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


def _optimizer_record(entry, opt, tensors):
    st = _state.STATE
    in_model = models.model_parameters()
    numel_in = sum(p.numel() for p in tensors if id(p) in in_model)
    numel = sum(p.numel() for p in tensors)
    groups = [{"tensors": len(g["params"]), "numel": sum(p.numel() for p in g["params"]),
               "lr": _number(g.get("lr")), "weight_decay": _number(g.get("weight_decay")),
               "momentum": _number(g.get("momentum"))}
              for g in opt.param_groups]
    _groups.annotate(groups, opt)
    st.emit("optimizer", step=st.step, optimizer=entry.index, **{"class": type(opt).__name__},
            where=entry.where, tensors=len(tensors), numel=numel, in_models=numel_in,
            not_in_models=numel - numel_in, groups=groups)


@probe("dist")
def _dist_record():
    """Rank and world size from torch.distributed itself (mp.spawn sets no RANK variable)."""
    dist = sys.modules.get("torch.distributed")
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return
    st = _state.STATE
    st.emit("dist", step=st.step, rank=dist.get_rank(), world_size=dist.get_world_size(),
            backend=str(dist.get_backend()))


def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _nested():
    """Whether this step runs inside another optimizer's step (ZeroRedundancyOptimizer and
    other wrappers that subclass Optimizer step an inner optimizer): only the outer one counts.
    Read from the call stack, so a step that raised leaves nothing stale behind."""
    global _STEP_WRAPPER
    if _STEP_WRAPPER is None:
        torch = sys.modules["torch"]
        _STEP_WRAPPER = torch.optim.Optimizer.profile_hook_step(lambda: None).__code__
    frame, seen = sys._getframe(2), 0
    while frame is not None:
        if frame.f_code is _STEP_WRAPPER:
            seen += 1
            if seen > 1:
                return True
        frame = frame.f_back
    return False


_STEP_WRAPPER = None


def _closure(opt, args, kwargs):
    """The closure a step was given (`opt.step(closure)`), or None. The hooks' `args` begin
    with the optimizer itself."""
    args = args[1:] if args and args[0] is opt else args
    closure = args[0] if args else (kwargs or {}).get("closure")
    return closure if callable(closure) else None


def step_pre(opt, args, kwargs):
    """The global step pre-hook. Counting steps must survive a failing measurement: only the
    measurements run under a probe guard."""
    st = _state.STATE
    try:
        if _nested():
            return
        entry = _entry(opt)
        if entry.index is None:
            entry.index = len(st.stepped)
            st.stepped.append(entry)
            st.open_trace(next((str(p.device) for p in tensors_of(opt)), None))
            if entry.index == 0:
                _dist_record()
            elif st.manual is not None and st.counted is None:
                # Backwards before the program's first optimizer was built were taken for a
                # hand-written update: from now on this optimizer's steps are the count.
                st.counted = entry
        if st.manual is not None:
            st.manual.pending_pre = None  # an optimizer steps: no hand-written step is open
        st.in_step = entry
        closure = _closure(opt, args, kwargs) is not None
        entry.counted = None
        if not (st.measuring or entry.steps < HEAVY_STEPS):
            entry.counted = {"closure": closure}  # a light step the cadence leaves unmeasured
            return
    except Exception as err:
        st.fail("steps", err)
        return
    started = time.perf_counter()
    _measure_pre(entry, opt, closure=closure)
    st.interval.measure_s += time.perf_counter() - started


def with_data(tensors):
    """The tensors that hold data: those on the meta device have none to compare or sum."""
    return [p for p in tensors if not p.is_meta]


def gradients(tensors, checksum):
    """The gradients' part of a step's measurement: counts, per-tensor norms and sums."""
    with_grad, measured = [], []
    for p in tensors:
        g = measured_gradient(p.grad)
        if g is not None:
            with_grad.append(p)
            measured.append(g)
    grad_norms = norms(measured)
    return {"with_grad": len(with_grad), "without_grad": len(tensors) - len(with_grad),
            "grad_sum": _per_device_total(sums64(measured)) if checksum else None,
            "with_grad_tensors": with_grad, "grad_norms": grad_norms}


@probe("optimizer")
def _measure_pre(entry, opt, closure=False):
    entry.heavy = measure_pre(entry, tensors_of(opt), closure)


def measure_pre(entry, tensors, closure=False):
    """What a step's post-hook compares with: the gradients (unless a closure computes them in
    the step) and copies of the tensors before the step."""
    torch = sys.modules["torch"]
    tensors = with_data(tensors)
    if closure:
        before, n_carried = "unknown", None
    else:
        before, n_carried = carried.before_step(entry, tensors)
    heavy = entry.steps < HEAVY_STEPS
    checksum = heavy or (entry.steps + 1) % CHECKSUM_EVERY == 0
    with torch.no_grad():
        pre = {"before": before, "carried": n_carried, "heavy": heavy, "checksum": checksum,
               "closure": closure}
        if not closure:
            pre.update(gradients(tensors, checksum))
        pre["compared"] = tensors if heavy else _largest(entry, tensors)
        pre["copies"], pre["sampled"] = _copies(pre["compared"], full=heavy)
    if entry.index == 0:
        stages.mark("step")  # after the copies: the optimizer's own memory is what follows
    return pre


def _largest(entry, tensors):
    """The LIGHT_TENSORS largest tensors, chosen once per optimizer."""
    if getattr(entry, "largest", None) is None or len(entry.largest) > len(tensors):
        order = sorted(range(len(tensors)), key=lambda i: -tensors[i].numel())
        entry.largest = sorted(order[:LIGHT_TENSORS])
    return [tensors[i] for i in entry.largest if i < len(tensors)]


def _per_device_total(values):
    """One 0-d sum per device, in float64 where the device has it."""
    torch = sys.modules["torch"]
    by_device = {}
    for v in values:
        by_device.setdefault(v.device, []).append(v)
    totals = []
    for device, group in by_device.items():
        dtype = torch.float32 if device.type == "mps" else torch.float64
        stacked, _ = stack_as(group, dtype)  # a sum: the order does not matter
        totals.append(stacked.sum())
    return totals


class _Packed:
    """A light step's samples of tensors of one device and dtype, copied as one tensor."""

    def __init__(self, flat, sizes):
        self.flat, self.sizes = flat, sizes


def _packable(tensors):
    """One device and one float dtype of at most 4 bytes: their difference in float32 is zero
    exactly where two elements are equal, so one subtraction and two fused norms measure all."""
    torch = sys.modules["torch"]
    if not tensors or tensors[0].dtype not in (torch.float32, torch.bfloat16, torch.float16):
        return False
    device, dtype = tensors[0].device, tensors[0].dtype
    return all(p.dtype == dtype and p.device == device for p in tensors)


def _copies(tensors, full):
    """Copies of the tensors before the step: whole on heavy steps (up to COPY_BYTES_MAX in
    all), else strided samples of LIGHT_ELEMENTS each (packed into one tensor where they can
    be). Returns (copies, sampled)."""
    total = sum(p.numel() * p.element_size() for p in tensors)
    limit = None if full and total <= COPY_BYTES_MAX else (
        FINGERPRINT_ELEMENTS if full else LIGHT_ELEMENTS)
    if not full and _packable(tensors):
        samples = [_strided(p, limit) for p in tensors]
        return _Packed(sys.modules["torch"].cat(samples), [s.numel() for s in samples]), limit
    return [(p.detach() if limit is None else sample(p, limit)).clone() for p in tensors], limit


def _strided(p, limit):
    """`sample(p, limit)` (every k-th element when p has more than `limit`) as one view op,
    for a contiguous tensor under no_grad."""
    if not p.is_contiguous():
        return sample(p, limit)
    n = p.numel()
    k = -(-n // limit) if n > limit else 1
    return p.as_strided((-(-n // k),), (k,), p.storage_offset())


def _compare_packed(tensors, copies, limit):
    """`_compare` of packed samples: ‖Δw‖ per tensor stands for `changed` too (0 exactly where
    nothing changed; NaN, where a NaN is, counts as changed as `!=` would have it)."""
    torch = sys.modules["torch"]
    before = copies.flat.to(torch.float32)
    diff = torch.cat([_strided(p, limit) for p in tensors]).to(torch.float32) - before
    n = len(copies.sizes)
    found = torch._foreach_norm(list(diff.split_with_sizes(copies.sizes))
                                + list(before.split_with_sizes(copies.sizes)))
    deltas, weights = list(found[:n]), list(found[n:])
    return deltas, deltas, weights


def _compare(tensors, copies, limit):
    """Per tensor: changed (0-d bool), ‖Δw‖ and ‖w before‖ (0-d float32), all on device."""
    torch = sys.modules["torch"]
    if isinstance(copies, _Packed):
        return _compare_packed(tensors, copies, limit)
    changed, deltas, weights = [], [], []
    for p, before in zip(tensors, copies):
        now = p.detach() if limit is None else sample(p, limit)
        changed.append((now != before).any())
        if now.is_complex():  # compared as their real views: every part counts
            now, before = torch.view_as_real(now), torch.view_as_real(before)
        diff = now.to(torch.float32) - before.to(torch.float32)
        deltas.append(torch.linalg.vector_norm(diff))
        weights.append(torch.linalg.vector_norm(before, dtype=torch.float32)
                       if before.is_floating_point() and before.element_size() <= 4
                       else torch.linalg.vector_norm(before.float()))
    return changed, deltas, weights


def step_post(opt, args, kwargs):
    """The global step post-hook: measure (guarded), then count; the reason the window ends at
    this step (hooks.py ends the process), or None."""
    st = _state.STATE
    try:
        if _nested():
            return
        entry = _entry(opt)
        if entry.index is None:  # the pre-hook failed before numbering it
            entry.index = len(st.stepped)
            st.stepped.append(entry)
        entry.steps += 1
        st.in_step = None
        pre, entry.heavy = entry.heavy, None
        counted, entry.counted = entry.counted, None
        if entry.steps == 1:
            _optimizer_record(entry, opt, tensors_of(opt))
    except Exception as err:
        st.fail("steps", err)
        return
    if pre is not None:
        started = time.perf_counter()
        _measure_post(entry, opt, pre)
        st.interval.measure_s += time.perf_counter() - started
    elif counted is not None:
        count_post(entry, opt, tensors_of(opt), counted["closure"])
    return step_done(entry)


@probe("counted")
def count_post(entry, opt, tensors, closure=False):
    """The short `step` record of a step the cadence leaves unmeasured (cadence.py): what the
    interval counted, the loss and the learning rate; no tensor is read."""
    st = _state.STATE
    iv = st.interval
    record = {"kind": "step", **_interval_fields(entry, opt), "closure": closure,
              "measured": False}
    if iv.batch is not None:
        record["batch"] = iv.batch.hexdigest()
    device = _first_device()
    if device is None or not device.startswith("cuda"):
        # The resident set is one read of a kept descriptor: every step's memory slope. The
        # CUDA allocator's counters build a dictionary (a large part of a measurement): only
        # on measured steps.
        record["memory"] = memory.memory_record(device)
    if st.clips:
        clip.take(opt, tensors)  # clips of an unmeasured step leave the queue unread
    _look_ahead(entry, tensors)
    # How many earlier losses are alive: weak references only, no tensor read, every step.
    record.update(losses.step_fields(entry) or {})
    st.emit_held(record)
    adapters.maybe_write(entry)
    if iv.loss is not None and not math.isfinite(iv.loss):
        nonfinite.after_step(iv.loss, None)


def _look_ahead(entry, tensors):
    """Remember the gradients for the next step's `grads_before_backward` when that step is
    measured (probes/carried.py), else forget them (nothing looks at the next backward)."""
    if _state.STATE.cadence.measuring(_state.STATE.step + 1) or entry.steps < HEAVY_STEPS:
        carried.snapshot(entry, with_data(tensors))
    else:
        carried.forget(entry)


def step_done(entry):
    """After a step's records: a new interval and the count; the reason the window ends at
    this step (the caller ends the process, hooks.py), or None."""
    st = _state.STATE
    data.note_step()
    iv = st.interval
    st.interval = _state.Interval(st.now())
    if entry.index == 0 and st.counted is None or entry is st.counted:
        start = _interval_start(st, iv)
        st.cadence.note(st, st.steps + 1, st.cadence.measuring(st.steps + 1), iv.measure_s,
                        None if start is None else st.interval.start - start)
        st.steps += 1  # records of this step are written; later ones lead to the next
        if st.step <= syncs.LAST + 1:  # armed for its steps, disarmed after them
            syncs.interval_started(st.step, _first_device())
        try:
            reason = window.after_step(st)
        except Exception as err:  # a window that fails ends as a fixed one would
            st.fail("window", err)
            reason = "steps" if st.limit and st.steps >= st.limit else None
        return reason
    return None


@probe("optimizer")
def _measure_post(entry, opt, pre):
    measure_post(entry, opt, tensors_of(opt), pre)


def measure_post(entry, opt, tensors, pre):
    """The `step` record (and on heavy steps the `grads` records) of a step measured by
    `measure_pre`; `opt` gives the learning rate (None for a hand-written update)."""
    st = _state.STATE
    torch = sys.modules["torch"]
    if entry.index == 0:
        stages.mark("step_end")  # before the comparisons below allocate anything
    all_tensors, tensors = tensors, with_data(tensors)
    if pre["closure"]:
        with torch.no_grad():
            pre.update(gradients(tensors, pre["checksum"]))
    values = []  # 0-d tensors read back together: one synchronisation per device
    with torch.no_grad():
        values.extend(pre["grad_norms"])  # the total is summed here: one read back for all
        n_sq = len(values)
        if pre["grad_sum"] is not None:
            values.extend(pre["grad_sum"])
            values.extend(_per_device_total(sums64([p.detach() for p in tensors])))
        n_sums = len(values)
        changed, deltas, weights = _compare(pre["compared"], pre["copies"], pre["sampled"])
        values.extend(changed + deltas + weights)
        n_compared = len(values)
        # The tensors measured before the step too: at the run's end a hand-written update's
        # model may be gone.
        clips = clip.take(opt, list(all_tensors) + pre.get("with_grad_tensors", []))
        values.extend(clip.values(clips))
    floats = to_floats(values)
    grad_norm = math.sqrt(sum(f * f for f in floats[:n_sq])) if n_sq else None
    record = _step_record(entry, opt, pre, grad_norm)
    if pre["grad_sum"] is not None:
        half = (n_sums - n_sq) // 2
        record["grad_checksum"] = sum(floats[n_sq:n_sq + half])
        record["param_checksum"] = sum(floats[n_sq + half:n_sums])
    if grad_norm is not None and not math.isfinite(grad_norm):
        st.cadence.always = True  # every step from here on is measured
        nonfinite.gradient(pre["with_grad_tensors"], floats[:n_sq])
    nonfinite.after_step(st.interval.loss, grad_norm)
    updates = _update_fields(record, pre["compared"], pre, floats[n_sums:n_compared])
    clip.fill(record, clips, floats[n_compared:])
    if entry.index == 0 and stages.take():
        record["memory_stages"] = stages.take()
    _look_ahead(entry, tensors)
    st.emit("step", **record)
    adapters.maybe_write(entry)
    if pre["heavy"]:
        grads.write_records(entry, all_tensors, updates, pre.get("kept"))
        if entry.index == 0:
            batchnorm.write_records(entry.steps)


def _interval_start(st, iv):
    """When the interval began (the first forward, for step 1)."""
    return iv.start if iv.start is not None else st.first_forward


def _interval_fields(entry, opt):
    """The fields of every `step` record, measured or not: the step, the interval's counts
    and times, its loss and the learning rate (`opt` None: a hand-written update)."""
    st = _state.STATE
    iv = st.interval
    now = st.now()
    start = _interval_start(st, iv)
    lr = opt.param_groups[0].get("lr") if opt is not None and opt.param_groups else None
    return {
        "step": entry.steps, "optimizer": entry.index, "time": now,
        "step_s": None if start is None else now - start, "data_wait_s": iv.data_wait,
        "forwards": iv.forwards, "nograd_forwards": iv.nograd_forwards,
        "backwards": iv.backwards, "loss": iv.loss, "lr": _number(lr),
        "training": iv.training,
    }


def _step_record(entry, opt, pre, grad_norm):
    st = _state.STATE
    iv = st.interval
    record = _interval_fields(entry, opt)
    record.update({
        "grads_before_backward": pre["before"],
        "grads_carried": pre["carried"], "grad_norm": grad_norm,
        "with_grad": pre["with_grad"], "without_grad": pre["without_grad"],
        "changed": None, "checked": None, "update_ratio": None, "update_sampled": None,
        "memory": memory.memory_record(_first_device()),
        "batch": iv.batch.hexdigest() if iv.batch is not None else None,
        "param_checksum": None, "grad_checksum": None, "closure": pre["closure"],
    })
    if iv.input is not None:
        record["input"] = iv.input
    record.update(losses.step_fields(entry) or {})
    if entry.index == 0:
        count, sites = syncs.take()
        if count is not None:
            record["syncs"], record["sync_sites"] = count, sites
    return record


def _update_fields(record, tensors, pre, floats):
    n = len(tensors)
    changed, deltas, weights = floats[:n], floats[n:2 * n], floats[2 * n:3 * n]
    record["changed"] = sum(1 for c in changed if c)
    record["checked"] = n
    d2, w2 = sum(d * d for d in deltas), sum(w * w for w in weights)
    record["update_ratio"] = math.sqrt(d2) / math.sqrt(w2) if w2 > 0 else None
    record["update_sampled"] = pre["sampled"] is not None
    return {id(p): (d, w) for p, d, w in zip(tensors, deltas, weights)}


def _first_device():
    return models.first_device()
