"""Ops at the edge of their domain in the loss's graph: `saturation` records.

A log, a division, a square root and a few others have a point where their value or their
derivative is not finite: log and its kin at 0 (and below), a division by 0, sqrt and a
fractional power at 0 (their derivative, 1 / (2 sqrt x), is infinite there), acos and asin at
+-1, exp past the format's largest value. An op that receives an input at that point in a
training graph makes its own output, or the gradient it sends back, infinite or NaN, even when
a `torch.where` or a mask keeps the bad entries out of the loss (0 * inf is NaN).

Read from the loss's autograd graph, before the backward frees it: each such op's node saved
what its derivative needs (`LogBackward0` the input, `DivBackward0` the denominator,
`SqrtBackward0` the result...). Nothing is recomputed and no module is hooked, so no cost
until a walk is asked for:

  heavy     on the heavy steps (once a step, at its first backward), written when an op is at
            its limit: its inputs at the singular point, or below the format's smallest normal
            number (subnormal: log's value is still finite there, its derivative 1/x is not far
            from overflow, and one more halving of the input underflows to 0)
  loss      at the first backward whose loss is not finite (the graph of that very loss)

A `loss` record is written whatever the walk finds: an empty `ops` says no op in the graph was
at its limit, so the value came from elsewhere (weights a step with a non-finite gradient had
already written NaN into, an input that was not finite, an op whose inputs need no gradient).
A gradient that turns non-finite on a light step while its loss is finite is not walked: the
graph that made it is gone by the optimizer's step, and the next one already runs on the
weights that step wrote. The walk visits at most NODES_MAX nodes, breadth first from the loss; `ops` lists at
most OPS_MAX, nearest the loss first. Reading each op's count is one small reduction and one
read-back per op, on those few steps only.

What it never does: keep a graph or a tensor, walk on a step not listed above, or unpack a
tensor saved under a saved-tensor hook (gradient checkpointing would recompute its forward,
an offload copy it back): those ops are not read.
"""

import math
import sys

from .. import models
from .. import state as _state
from ..state import probe

NODES_MAX = 20_000  # nodes visited by one walk: a large transformer's graph fits
OPS_MAX = 8  # ops listed in one record

# grad_fn class -> (op, the saved attribute, the test applied to it)
#   "log": x <= 0 is singular, 0 < x < tiny is subnormal
#   "log1p": x <= -1
#   "denominator": x == 0 singular, 0 < |x| < tiny subnormal
#   "result_inf": the saved result is not finite (reciprocal, rsqrt, exp: their input was at
#                 the limit, or past the largest value for exp)
#   "sqrt_result": the saved result is 0 (infinite derivative) or NaN (a negative input)
#   "unit": |x| >= 1 (acos, asin: infinite derivative at +-1, NaN beyond)
NODES = {
    "LogBackward0": ("log", "_saved_self", "log"),
    "Log2Backward0": ("log2", "_saved_self", "log"),
    "Log10Backward0": ("log10", "_saved_self", "log"),
    "Log1PBackward0": ("log1p", "_saved_self", "log1p"),
    "DivBackward0": ("div", "_saved_other", "denominator"),
    "DivBackward1": ("div", "_saved_other", "denominator"),
    "DivBackward2": ("div", "_saved_other", "denominator"),
    "DivBackward3": ("div", "_saved_other", "denominator"),
    "ReciprocalBackward0": ("reciprocal", "_saved_result", "result_inf"),
    "RsqrtBackward0": ("rsqrt", "_saved_result", "result_inf"),
    "ExpBackward0": ("exp", "_saved_result", "result_inf"),
    "SqrtBackward0": ("sqrt", "_saved_result", "sqrt_result"),
    "AcosBackward0": ("acos", "_saved_self", "unit"),
    "AsinBackward0": ("asin", "_saved_self", "unit"),
    "PowBackward0": ("pow", "_saved_self", "pow"),
}


@probe("saturation")
def at_backward(loss, value):
    """A backward is about to run on `loss` (its value `value`, a float or None): walk its graph
    when this backward is one the module docstring lists."""
    torch = sys.modules["torch"]
    st = _state.STATE
    if not isinstance(loss, torch.Tensor) or loss.grad_fn is None:
        return
    when = None
    if value is not None and not math.isfinite(value) and ("saturation", "loss") not in st.reported:
        when = "loss"
    elif st.heavy and ("saturation", "heavy") not in st.reported \
            and ("saturation", st.step) not in st.reported:
        when = "heavy"
    if when is None:
        return
    if when == "heavy":
        st.reported.add(("saturation", st.step))  # one walk a heavy step
    ops, nodes, truncated = walk(torch, loss.grad_fn)
    if when == "heavy" and not ops:
        return
    st.reported.add(("saturation", when))
    st.emit("saturation", step=st.step, when=when,
            loss_finite=value is None or math.isfinite(value),
            nodes=nodes, truncated=truncated, ops=ops)


def walk(torch, root):
    """(ops at their limit, nodes visited, whether the walk stopped at NODES_MAX)."""
    ops = []
    seen = {root}
    frontier = [root]
    depth = 0
    while frontier and len(seen) < NODES_MAX:
        nxt = []
        for fn in frontier:
            entry = NODES.get(type(fn).__name__)
            if entry is not None and len(ops) < OPS_MAX:
                found = _measure(torch, fn, entry, depth)
                if found is not None:
                    ops.append(found)
            for child, _ in getattr(fn, "next_functions", ()):
                if child is not None and child not in seen:
                    seen.add(child)
                    nxt.append(child)
        frontier = nxt
        depth += 1
    return ops, len(seen), bool(frontier)


def _measure(torch, fn, entry, depth):
    op, attr, test = entry
    if _hooked(fn, attr):
        return None
    try:
        saved = getattr(fn, attr)
    except (RuntimeError, AttributeError):  # freed by an earlier backward, or not saved
        return None
    scalar = not isinstance(saved, torch.Tensor)
    if scalar:
        if not isinstance(saved, (int, float)) or isinstance(saved, bool):
            return None
        saved = torch.tensor(float(saved))
    if not (saved.is_floating_point() or saved.is_complex()) and test != "denominator":
        return None
    exponent = None
    if test == "pow":
        exponent = getattr(fn, "_saved_exponent", None)
        if not isinstance(exponent, (int, float)) or isinstance(exponent, bool) \
                or exponent >= 1 or float(exponent) == 0.0:
            return None  # an integer power >= 1 has a finite derivative everywhere
    with torch.no_grad():
        x = saved.detach()
        if x.is_complex():
            x = x.abs()
        tiny = torch.finfo(x.dtype).tiny if x.is_floating_point() else 1.0
        counts = _counts(torch, x, test, tiny, exponent)
    n = x.numel()
    at_limit = counts["singular"] + counts["subnormal"]
    if at_limit == 0:
        return None
    return {
        "op": op, "grad_fn": type(fn).__name__, "input": _tensor_name(saved, scalar),
        "dtype": str(x.dtype).replace("torch.", ""), "elements": n,
        "singular": counts["singular"], "subnormal": counts["subnormal"],
        "min": counts["min"], "exponent": exponent, "depth": depth,
    }


def _hooked(fn, attr):
    """Whether reading the saved tensor would run a saved-tensor hook of the program's: a
    checkpointed region recomputes its forward when unpacked, an offload copies back to the
    device. Those are left unread (`_raw_saved_*` tells without unpacking; a torch that cannot
    tell is not read either). A Python number has no raw form and no hook."""
    try:
        raw = getattr(fn, "_raw" + attr)
    except (RuntimeError, AttributeError):
        return False
    return getattr(raw, "unpack_hook", True) is not None


def _limits(torch, x, test, tiny, exponent):
    """(elements at the singular point, elements just above it or None where the op has no
    such band, the values whose smallest is reported or None where it would say nothing)."""
    if test == "log":
        return x <= 0, (x > 0) & (x < tiny), x
    if test == "log1p":
        return x <= -1, None, x
    if test == "denominator":
        a = x.abs()
        return a == 0, (a > 0) & (a < tiny), a
    if test == "result_inf":
        return ~torch.isfinite(x), None, None
    if test == "sqrt_result":
        return (x == 0) | torch.isnan(x), None, x
    if test == "pow":
        return (x == 0 if float(exponent).is_integer() else x <= 0), None, x
    return x.abs() >= 1, None, None  # "unit"


def _counts(torch, x, test, tiny, exponent):
    """Elements at the singular point and just above it (subnormal), and the smallest value
    (of |x| for a denominator) over the finite elements, in one read-back."""
    if not x.is_floating_point():
        x = x.double()
    singular, subnormal, values = _limits(torch, x, test, tiny, exponent)
    zero = torch.zeros((), dtype=torch.float64, device=x.device)
    inf = torch.full((), math.inf, dtype=torch.float64, device=x.device)
    smallest = torch.where(torch.isfinite(values), values, inf).min().double() \
        if values is not None and values.numel() else inf
    packed = torch.stack([singular.sum().double(),
                          subnormal.sum().double() if subnormal is not None else zero,
                          smallest]).tolist()
    low = packed[2]
    return {"singular": int(packed[0]), "subnormal": int(packed[1]),
            "min": low if math.isfinite(low) else None}


def _tensor_name(t, scalar):
    """A parameter's name; "scalar" for a Python number or another 0-d tensor; else None."""
    name = None if scalar else models.name_of(t)
    if name is None and (scalar or t.dim() == 0):
        return "scalar"
    return name
