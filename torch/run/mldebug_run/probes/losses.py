"""The tensor each backward is called on (the loss): whether earlier steps' losses are still
alive with their graph, and how the loss reduces its elements.

Kept losses: at every backward, a weak reference to the tensor backward was called on (for a
GradScaler's output, the loss it scaled). Each optimizer keeps the references of its last
LOSS_WATCH steps (one per step: the interval's last backward); at each step record it counts
how many of the previous steps' losses are still alive and still have a `grad_fn`, and how many
of those were backpropagated with `retain_graph=True`. After a plain backward a kept loss holds
its graph's nodes, whose saved tensors the backward freed; one whose graph was retained holds
its activations too. A loop's
variable is rebound at the next step, so a plain loop counts 0, and one that keeps the previous
loss by name (`last_loss = loss`) counts 1; a list of undetached losses counts every step. A
detached copy (`loss.detach()`, `loss.item()`, the Trainer's `tr_loss`) is another tensor and
leaves the loss to die. Not seen: a loss kept only inside another tensor's graph
(`total = total + loss` keeps the graph, not the loss tensor; autograd's nodes take no weak
reference).

Reduction (heavy steps): read from the loss's own `grad_fn`, before the backward frees it: a
loss function's node (`NllLossBackward0`, `MseLossBackward0`, ...) saves its reduction and its
target, a `.sum()` or `.mean()` the sizes of what it reduced. Anything else (a division by
the batch size, a weighted sum of losses) is left unknown.

What it never does: hold a loss (weak references only), read a value, or synchronise.
"""

import collections
import sys
import weakref

from .. import state as _state
from ..state import probe

LOSS_WATCH = 16  # steps whose loss is watched: as many as the judge asks to see kept
# The loss functions' nodes, their saved tensor whose element count is the number of terms
# reduced, and whether that count is per class row (the target of a classification loss).
LOSS_NODES = {
    "NllLossBackward0": "_saved_target", "NllLoss2DBackward0": "_saved_target",
    "MseLossBackward0": "_saved_self", "L1LossBackward0": "_saved_self",
    "SmoothL1LossBackward0": "_saved_self", "HuberLossBackward0": "_saved_self",
    "BinaryCrossEntropyBackward0": "_saved_self",
    "BinaryCrossEntropyWithLogitsBackward0": "_saved_self",
    "SoftMarginLossBackward0": "_saved_self", "KlDivBackward0": "_saved_self",
}
REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}  # at::Reduction
SUM_NODES = ("SumBackward0", "SumBackward1")
MEAN_NODES = ("MeanBackward0", "MeanBackward1")


@probe("losses")
def at_backward(tensor, args=(), kwargs=None):
    """A backward is called on `tensor` (the loss, unscaled) with `torch.autograd.backward`'s
    `args` and `kwargs`: remember it by weak reference with whether the backward keeps its graph
    (`retain_graph`, by default `create_graph`), and on heavy steps how it reduces."""
    torch = sys.modules["torch"]
    st = _state.STATE
    if not isinstance(tensor, torch.Tensor) or tensor.grad_fn is None:
        return
    kwargs = kwargs or {}
    retain = kwargs.get("retain_graph", args[2] if len(args) > 2 else None)
    if retain is None:
        retain = kwargs.get("create_graph", args[3] if len(args) > 3 else False)
    st.interval.loss_ref = (weakref.ref(tensor), bool(retain))
    if st.heavy and st.interval.reduction is None:
        st.interval.reduction = reduction_of(tensor)


def reduction_of(tensor):
    """{"grad_fn", "reduction", "elements"} of a scalar loss, or None for one that is not."""
    fn = tensor.grad_fn
    if fn is None or tensor.numel() != 1:
        return None
    name = type(fn).__name__
    reduction = elements = None
    saved = LOSS_NODES.get(name)
    if saved is not None:
        reduction = REDUCTIONS.get(getattr(fn, "_saved_reduction", None))
        t = getattr(fn, saved, None)
        elements = t.numel() if t is not None and hasattr(t, "numel") else None
    elif name in SUM_NODES or name in MEAN_NODES:
        reduction = "sum" if name in SUM_NODES else "mean"
        sizes = getattr(fn, "_saved_self_sym_sizes", None)
        if sizes is not None:
            elements = 1
            for s in sizes:
                elements *= int(s)
    return {"grad_fn": name, "reduction": reduction, "elements": elements}


def _watched(entry):
    if entry.losses is None:
        entry.losses = collections.deque(maxlen=LOSS_WATCH)
    return entry.losses


@probe("losses")
def step_fields(entry):
    """`losses_alive`, `losses_retained` and `losses_watched` of a step record, then this
    step's loss joins the watched ones; `loss_reduction` on heavy steps."""
    st = _state.STATE
    watched = _watched(entry)
    alive = retained = seen = 0
    for watch in watched:
        if watch is None:
            continue
        seen += 1
        t = watch[0]()
        if t is not None and t.grad_fn is not None:
            alive += 1
            retained += watch[1]
    watched.append(st.interval.loss_ref)
    fields = {"losses_alive": alive, "losses_retained": retained, "losses_watched": seen}
    if st.interval.reduction is not None:
        fields["loss_reduction"] = st.interval.reduction
    return fields
