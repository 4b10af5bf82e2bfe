"""Updates written by hand: a program that builds no `torch.optim` optimizer and changes its
parameters itself (`p.data.add_(p.grad, alpha=-lr)`, a loop over the parameters under
`torch.no_grad()`), then resets the gradients (`model.zero_grad()`).

Such a program's steps are measured from its backward passes. A step is a backward followed by
the next root forward with gradients enabled (or the end of the run): when the backward returns,
the gradients and the parameters of every model that require a gradient are measured and copied
as an optimizer's step pre-hook does (probes/optim.py, `measure_pre`); at the next such forward
they are compared (`measure_post`), and the `step` record is written. The update itself is
whatever ran in between. Several backwards before one forward (an extra backward on a retained
graph) belong to one step. The `optimizer` record of this entry says `manual: true` and has
class `hand-written`; its steps are counted as optimizer 0's, so `--steps N` stops the program
after N of them.

On the heavy steps copies of the gradients the backward left are held until the boundary, for
the `grads` records (the program resets them before its next forward, often in place with
`p.grad.zero_()`): the one exception to holding no gradient, for the few statements between
the update and that forward. On a step the cadence leaves unmeasured (cadence.py) nothing is
measured; when the next step is measured, the gradients' identities and versions are still
taken at the backward, so that an in-place reset before the next forward counts as one.

Gradients reset in place (`zero_grad(set_to_none=False)`, `p.grad.zero_()`) before the next
forward read as reset: at the boundary, a gradient written since the backward and now all zero
counts as zeroed (probes/carried.py cannot see a write that precedes its own look).

Gradients taken with `torch.autograd.grad(loss, params)` instead of a backward (the update then
subtracts the returned tensors; `.grad` stays None) are such a backward too, when the call
differentiates with respect to trainable parameters of a model that has run, without
`create_graph` (a graph kept for a later backward, as MAML's inner steps keep it, is no update
of its own) and while no optimizer exists (patches.py wraps the function, `wrap_grad`); the
other calls made once a model has run are counted (`grads_taken` in the `end` record: torch.func's
`grad` transform calls it on its own wrapped tensors, so a program that trains a dictionary of
tensors through `functional_call` shows there, not as steps). The
returned gradients stand in for `.grad` while the step's start is measured: assigned to the
parameters whose `.grad` is None, measured, and set back to None before the call returns, so
the program never sees them.

Tensors of no module (a program with no `nn.Module` and no optimizer: its parameters are leaf
tensors made with `requires_grad`, its forward plain tensor operations, its update written by
hand under `no_grad`). While no model has run and no optimizer exists, each backward (and each
`torch.autograd.grad` over leaf tensors, without `create_graph`) walks its graph, at most
GRAPH_NODES_MAX nodes, for the leaf tensors it reaches that need a gradient (its
`AccumulateGrad` nodes) and counts itself (`raw_backwards` in the `end` record); the first one
opens the trace. There is no forward to end a step, so the next backward ends it: when the next
backward reaches the very same leaf tensors (the parameters a training loop reuses), those are
the parameters, the step that the previous backward began is measured before the new backward
runs (changed tensors, update ratio, gradient norm, as above), and from then on every backward
is a step boundary, without a walk. Leaves that are new at each backward (gradients of fresh
inputs, a saliency map; a loop that makes new parameter tensors at each step) make no step: what
the program did is in `raw_backwards`. A model that runs forward later ends this: its parameters
are measured from then on, and a step the leaves began is dropped.

It never measures once an optimizer has been constructed (that optimizer's step does; one that
first steps after hand-written steps takes over the step count, probes/optim.py), and it never
changes a parameter or a gradient the program can see.
"""

import functools
import sys
import time
import weakref

from .. import models
from .. import state as _state
from ..state import HEAVY_STEPS, probe
from . import optim
from .tensors import norms, to_floats

CLASS = "hand-written"
GRAPH_NODES_MAX = 10000  # nodes of a backward's graph walked for its leaf tensors, at most


class Update:
    """What stands for the optimizer: the trainable parameters of the models seen so far, in
    the order the models first ran (a model that appears later adds its parameters at the
    end, so earlier indices keep their tensor). No strong reference to a model."""

    @property
    def param_groups(self):
        raw = _state.STATE.raw
        if raw is not None and not _state.STATE.model_list:
            return [{"params": [p for p in (r() for r in raw.refs) if p is not None],
                     "lr": None}]
        seen, params = set(), []
        for entry in _state.STATE.model_list:
            inner = entry.inner()
            if inner is None:
                continue
            for p in inner.parameters():
                if p.requires_grad and id(p) not in seen and not models._is_lazy(p):
                    seen.add(id(p))
                    params.append(p)
        return [{"params": params, "lr": None}]


_UPDATE = Update()


def _entry():
    st = _state.STATE
    if st.manual is None:
        entry = _state.OptimizerEntry(lambda: _UPDATE, None)
        entry.manual = True
        entry.index = len(st.stepped)
        entry.pending_pre = None
        st.stepped.append(entry)
        st.manual = entry
    return st.manual


def _tensors():
    return optim.tensors_of(_UPDATE)


@probe("manual")
def after_backward():
    """A backward returned: the first since the last boundary starts a step, unless an
    optimizer exists (its own step is coming) or no model has run."""
    st = _state.STATE
    if st.optimizers or st.ended or not (st.model_list or st.raw is not None and st.raw.refs):
        return
    entry = _entry()
    if entry.pending_pre is not None:
        return
    if not (st.measuring or entry.steps < HEAVY_STEPS):
        entry.pending_pre = {"counted": True, "raw": not st.model_list}  # cadence.py
        if st.cadence.measuring(st.step + 1):  # the next step is: its reset is seen from here
            entry.pending_pre["looks"] = _looks(optim.with_data(_tensors()))
        return
    started = time.perf_counter()
    tensors = _tensors()
    pre = optim.measure_pre(entry, tensors)
    pre["raw"] = not st.model_list
    pre["looks"] = _looks(optim.with_data(tensors))
    if pre["heavy"]:
        # The `grads` records describe the gradients the update used; the program resets them
        # before the next forward (in place, often), so on heavy steps copies are held until
        # then.
        pre["kept"] = {id(p): p.grad.detach().clone() for p in tensors if p.grad is not None}
    entry.pending_pre = pre
    st.interval.measure_s += time.perf_counter() - started


@probe("manual")
def boundary():
    """A root forward with gradients enabled begins (or the run ends): the step that the last
    backward began is over. The reason the window ends at that step (the caller ends the
    process), or None."""
    st = _state.STATE
    entry = st.manual
    if entry is None or entry.pending_pre is None:
        return
    pre, entry.pending_pre = entry.pending_pre, None
    if pre.get("raw") and (st.model_list or not st.raw.established):
        # Begun on leaf tensors and ended by a model's forward, or by the end of a run whose
        # backwards never reached the same leaves twice: no step.
        return None
    entry.steps += 1
    tensors = _tensors()
    if entry.steps == 1:
        _optimizer_record(entry, tensors)
    if pre.get("counted"):
        optim.count_post(entry, None, tensors)
        if "looks" in pre:
            _zeroed_in_place(entry, optim.with_data(tensors), pre["looks"])
        return optim.step_done(entry)
    started = time.perf_counter()
    optim.measure_post(entry, None, tensors, pre)
    _zeroed_in_place(entry, optim.with_data(tensors), pre["looks"])
    st.interval.measure_s += time.perf_counter() - started
    return optim.step_done(entry)


class Raw:
    """The leaf tensors of no module that the last backward reached (weak references), and
    whether a later backward reached the same ones (then they are the parameters)."""

    def __init__(self):
        self.refs = []
        self.established = False


def leaves(roots):
    """The leaf tensors that need a gradient reached from `roots` (a tensor or a sequence of
    them) through their graph, in the walk's order, the walk stopped after GRAPH_NODES_MAX
    nodes."""
    torch = sys.modules["torch"]
    if isinstance(roots, torch.Tensor):
        roots = (roots,)
    elif not isinstance(roots, (list, tuple)):
        return []
    stack = [t.grad_fn for t in roots if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    seen, found, ids = set(), [], set()
    while stack and len(seen) < GRAPH_NODES_MAX:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)  # AccumulateGrad: a leaf's gradient sink
        if isinstance(variable, torch.Tensor):
            if id(variable) not in ids:
                ids.add(id(variable))
                found.append(variable)
            continue
        for child, _ in getattr(node, "next_functions", ()):
            if child is not None:
                stack.append(child)
    return found


@probe("manual")
def raw_backward(roots):
    """A backward (or an update's torch.autograd.grad) over `roots` is about to run while no
    model has run and no optimizer exists: the step the previous backward began ends here when
    this one reaches the same leaf tensors. The reason the window ends at that step (the caller
    ends the process), or None."""
    st = _state.STATE
    if st.optimizers or st.ended or st.model_list:
        return None
    raw = st.raw
    if raw is not None and raw.established:
        st.totals["raw_backwards"] += 1
        return boundary()
    found = leaves(roots)
    if not found:
        return None
    st.totals["raw_backwards"] += 1
    st.open_trace(str(found[0].device))
    if raw is None:
        raw = st.raw = Raw()
    if raw.refs and len(raw.refs) == len(found) \
            and all(r() is p for r, p in zip(raw.refs, found)):
        raw.established = True
        return boundary()
    # Other leaves than the last backward's: what that backward began is no step.
    if st.manual is not None:
        st.manual.pending_pre = None
    raw.refs = [weakref.ref(p) for p in found]
    return None


def _optimizer_record(entry, tensors):
    st = _state.STATE
    numel = sum(p.numel() for p in tensors)
    in_models = numel if st.model_list else 0  # leaf tensors of no module: none in a model
    st.emit("optimizer", step=st.step, optimizer=entry.index, **{"class": CLASS}, where=None,
            tensors=len(tensors), numel=numel, in_models=in_models,
            not_in_models=numel - in_models,
            groups=[{"tensors": len(tensors), "numel": numel, "lr": None,
                     "weight_decay": None, "momentum": None}],
            manual=True)


def _looks(tensors):
    """Each gradient as the backward left it: (weak reference, version), or None."""
    return [(weakref.ref(p.grad), p.grad._version) if p.grad is not None else None
            for p in tensors]


def _zeroed_in_place(entry, tensors, looks):
    """Gradients written since the backward and all zero now: reset before the next forward."""
    torch = sys.modules["torch"]
    written = []
    for i, (p, look) in enumerate(zip(tensors, looks)):
        g = p.grad
        if g is not None and look is not None and look[0]() is g and g._version != look[1]:
            written.append((i, g))
    if not written or entry.reset is None:
        return
    with torch.no_grad():
        sizes = to_floats(norms([g for _, g in written]))
    for (i, _), size in zip(written, sizes):
        if size == 0.0 and i < len(entry.reset):
            entry.reset[i] = "zeroed"
    entry.unresolved = any(r is None for r in entry.reset)


# torch.autograd.grad(outputs, inputs, grad_outputs, retain_graph, create_graph, only_inputs,
# allow_unused, is_grads_batched, materialize_grads): positions of the arguments read here.
_GRAD_INPUTS, _GRAD_CREATE_GRAPH, _GRAD_BATCHED = 1, 4, 7


def _grad_argument(args, kwargs, position, name, default=None):
    if len(args) > position:
        return args[position]
    return kwargs.get(name, default)


def grad_parameters(args, kwargs):
    """The (position, parameter) pairs of a `torch.autograd.grad` call that is the gradient of
    an update written by hand (see the module docs), or None."""
    st = _state.STATE
    if st.optimizers or st.ended:
        return None
    if _grad_argument(args, kwargs, _GRAD_CREATE_GRAPH, "create_graph", False) \
            or _grad_argument(args, kwargs, _GRAD_BATCHED, "is_grads_batched", False):
        return None
    inputs = _grad_argument(args, kwargs, _GRAD_INPUTS, "inputs")
    torch = sys.modules["torch"]
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    elif isinstance(inputs, dict):
        inputs = tuple(inputs.values())
    elif not isinstance(inputs, (list, tuple)):
        return None
    if not st.model_list:
        # No model: leaf tensors of the program's own (raw_backward decides on a step).
        found = [(i, p) for i, p in enumerate(inputs) if isinstance(p, torch.Tensor)
                 and p.is_leaf and p.requires_grad]
        return found or None
    mine = {id(p) for p in _UPDATE.param_groups[0]["params"]}
    found = [(i, p) for i, p in enumerate(inputs) if id(p) in mine]
    return found or None


@probe("manual")
def after_grad(found, result):
    """A `torch.autograd.grad` call of an update returned `result`: measured as a backward's
    end, with the returned gradients standing in for `.grad` while the step's start is
    measured (set back to None before returning)."""
    grads = list(result.values()) if isinstance(result, dict) else list(result)
    assigned = []
    try:
        for i, p in found:
            g = grads[i] if i < len(grads) else None
            if g is None or p.grad is not None or g.shape != p.shape or g.dtype != p.dtype \
                    or g.device != p.device:
                continue
            p.grad = g
            assigned.append(p)
        after_backward()
    finally:
        for p in assigned:
            p.grad = None


def wrap_grad(original, before_backward, after_backward_hook, mark):
    """`torch.autograd.grad`, counted as a backward (before_backward: the loss, the counts;
    after_backward_hook: what the backward left, for the carried check; mark: the memory
    stages) when it is an update's gradient. Closure variables only: patches.py runs this with
    the globals of torch.autograd."""
    state, takes, measure = _state, grad_parameters, after_grad
    compiling = _state.compiling_check()

    @functools.wraps(original)
    def grad(*args, **kwargs):
        st = state.STATE
        if st is None or st.in_backward or st.ended or compiling():
            return original(*args, **kwargs)
        try:
            found = takes(args, kwargs)
        except Exception as err:  # never the program's
            st.fail("manual", err)
            found = None
        if found is None:
            if st.model_list:
                st.totals["grads_taken"] = st.totals.get("grads_taken", 0) + 1
            return original(*args, **kwargs)
        outputs = args[0] if args else kwargs.get("outputs")
        try:
            mark("backward")
            before_backward((outputs,), {})
        except Exception as err:
            st.fail("backward", err)
        st.in_backward += 1
        try:
            result = original(*args, **kwargs)
        finally:
            st.in_backward -= 1
        try:
            after_backward_hook()
            mark("backward_end")
            measure(found, result)
        except Exception as err:
            st.fail("backward", err)
        return result

    return grad
