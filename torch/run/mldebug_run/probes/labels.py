"""Loss functions and labels on the first HEAVY_STEPS steps: `loss_call` and `labels` records.

`loss_call`: each call of `cross_entropy`, `nll_loss`, `binary_cross_entropy_with_logits` or
`mse_loss` (at most RECORDS_PER_STEP per step with gradients on, and off): classes, targets,
ignored targets, whether the input rows already are probabilities or log-probabilities (checked
on the first ROWS_CHECKED rows), the value, the value per counted target (a `sum` reduction, as
transformers uses with `num_items_in_batch`, divided back), reduction and label smoothing.

`labels`, two sources:
  kwargs  a root forward that received `labels` (a transformers model): the labels against the
          `input_ids` it received, position by position; padding from `attention_mask`, else
          from the model config's `pad_token_id`
  loss    a root forward with an integer input and no `labels`: the integer targets of the next
          cross_entropy/nll_loss call against that input (targets of length T or T-1 per row);
          `shifts_labels` is then false (the loss the program calls receives them as they are)
A record made inside a root forward that turns out to have received `labels` is dropped.

What it never does: change the loss, its inputs or its value; it reads them under no_grad.
"""

import functools
import inspect
import sys
import threading

from .. import state as _state
from ..state import compiling_check, probe
from ..where import where

LOSS_FUNCTIONS = ("cross_entropy", "nll_loss", "binary_cross_entropy_with_logits", "mse_loss")
ROWS_CHECKED = 4096  # rows checked for probabilities
ELEMENTS_CHECKED = 1 << 22  # ...and at most 4M elements of them: bounded for a 50k-class LM head
ROW_SUM_TOLERANCE = 1e-3  # a softmax row sums to 1 within float32 rounding over many classes
HF_IGNORE_INDEX = -100  # transformers' loss ignores this label

_busy = threading.local()
_signatures = {}


def wrap_loss(fn):
    # Closure variables only: patches.py runs this with the globals of torch.nn.functional.
    name, state, busy, called = fn.__name__, _state, _busy, loss_called
    compiling, grad_enabled = compiling_check(), sys.modules["torch"].is_grad_enabled

    @functools.wraps(fn)
    def loss(*args, **kwargs):
        st = state.STATE
        if (st is None or not st.heavy or getattr(busy, "on", False) or compiling()
                or not st.within_budget("loss_call", grad_enabled())):
            return fn(*args, **kwargs)
        busy.on = True
        try:
            out = fn(*args, **kwargs)
        finally:
            busy.on = False
        called(name, fn, args, kwargs, out)
        return out

    return loss


def _bound(fn, args, kwargs):
    sig = _signatures.get(fn)
    if sig is None:
        sig = _signatures[fn] = inspect.signature(fn)
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.arguments


def _rows_last(x, class_dim):
    """Up to ROWS_CHECKED rows of the input with the class dimension last, as float32."""
    x = x.detach()
    if x.dim() > 2:
        x = x[:1].movedim(class_dim, -1)  # (1, C, d...) -> (1, d..., C): one sample's rows
    x = x.reshape(-1, x.shape[-1]) if x.dim() >= 1 else x.reshape(1, 1)
    rows = max(1, min(ROWS_CHECKED, ELEMENTS_CHECKED // max(1, x.shape[-1])))
    return x[:rows].float()


@probe("loss_call")
def loss_called(name, fn, args, kwargs, out):
    torch = sys.modules["torch"]
    st = _state.STATE
    a = _bound(fn, args, kwargs)
    x, target = a["input"], a["target"]
    integer_target = not target.is_floating_point() and not target.is_complex()
    classes = probabilities = log_probabilities = ignored = None
    ignore_index = a.get("ignore_index")
    with torch.no_grad():
        if name in ("cross_entropy", "nll_loss"):
            classes = x.shape[1] if x.dim() >= 2 else x.shape[0]
            rows = _rows_last(x, 1 if x.dim() >= 2 else 0)
            in_unit = bool(((rows >= 0) & (rows <= 1)).all())
            sums = rows.sum(-1)
            probabilities = in_unit and bool(((sums - 1).abs() <= ROW_SUM_TOLERANCE).all())
            log_probabilities = bool((rows <= ROW_SUM_TOLERANCE).all()) and bool(
                ((rows.exp().sum(-1) - 1).abs() <= ROW_SUM_TOLERANCE).all())
            if integer_target:
                ignored = int((target == ignore_index).sum())
        elif name == "binary_cross_entropy_with_logits":
            flat = x.detach().reshape(-1)[: ROWS_CHECKED * 16].float()
            probabilities = bool(((flat >= 0) & (flat <= 1)).all())
            log_probabilities = False
        targets = target.numel() if integer_target or classes is None else target.numel() // max(1, classes)
        out = out.detach().float()
        value = float(out.mean()) if out.numel() else None
        counted = targets - (ignored or 0)
        reduction = a.get("reduction")
        per_target = value if reduction == "mean" else (
            float(out.sum()) / counted if counted and out.numel() else None)
    st.emit("loss_call", step=st.step, fn=name, where=where(3), classes=classes,
            targets=targets, ignored=ignored, ignore_index=ignore_index,
            probabilities=probabilities, log_probabilities=log_probabilities, value=value,
            per_target=per_target, reduction=reduction,
            label_smoothing=a.get("label_smoothing"), grad_enabled=torch.is_grad_enabled())
    if integer_target and name in ("cross_entropy", "nll_loss") and st.int_input is not None:
        _labels_from_loss(target, ignore_index)


def _labels_from_loss(target, ignore_index):
    from ..hooks import current_root

    st = _state.STATE
    entry, inputs = st.int_input
    st.int_input = None
    record = compare(entry, inputs, target, ignore_index, None, "loss", False)
    if record is None or not st.within_budget("labels", sys.modules["torch"].is_grad_enabled()):
        return
    if current_root() is not None:
        st.labels_candidate = record  # kept unless this forward received `labels`
    else:
        st.emit("labels", **record)


def compare(entry, inputs, labels, ignore_index, attention_mask, source, shifts):
    """The `labels` record comparing integer `labels` with integer `inputs` (B, T), labels
    being (B, T) or (B, T-1); None when the shapes do not allow it."""
    torch = sys.modules["torch"]
    st = _state.STATE
    if inputs.dim() == 0 or labels.numel() == 0:
        return None
    b = inputs.shape[0]
    ids = inputs.detach().reshape(b, -1)
    t = ids.shape[1]
    if labels.numel() % b:
        return None
    tl = labels.numel() // b
    if tl < 2 or tl not in (t, t - 1):
        return None
    with torch.no_grad():
        lab = labels.detach().reshape(b, tl).to(ids.device)
        valid = lab != ignore_index
        equal = (lab == ids[:, :tl]) & valid
        nxt_lab, nxt_valid = lab[:, : t - 1], valid[:, : t - 1]
        nxt = (nxt_lab == ids[:, 1:]) & nxt_valid
        pad_from, pad = None, None
        if attention_mask is not None and attention_mask.shape == inputs.shape:
            pad_from, pad = "attention_mask", attention_mask.detach().reshape(b, -1)[:, :tl] == 0
        elif _pad_id(entry) is not None:
            pad_from, pad = "pad_token_id", _edge_runs(ids == _pad_id(entry))[:, :tl]
        counts = [valid.sum(), (~valid).sum(), equal.sum(), nxt.sum(), nxt_valid.sum()]
        if pad is not None:
            counts += [pad.sum(), (pad & valid).sum()]
        counts = torch.stack(counts).tolist()
    positions, ignored, n_equal, n_next, next_positions = counts[:5]
    return {"step": st.step, "model": entry.index, "shifts_labels": shifts,
            "grad_enabled": torch.is_grad_enabled(),
            "source": source, "positions": positions, "ignored": ignored,
            "equal_inputs": n_equal / positions if positions else None,
            "next_inputs": n_next / next_positions if next_positions else None,
            "pad_token_id": _pad_id(entry), "pad_from": pad_from,
            "pad_positions": counts[5] if pad is not None else None,
            "pad_labelled": counts[6] if pad is not None else None}


def _edge_runs(mask):
    """The positions of `mask` (B, T) in a run that starts at a row's first or ends at its last
    position: padding is at the edges; the pad token in mid-row is an ordinary token (a
    vocabulary whose pad id is also a real token, such as GPT-2 with pad = eos, or id 0)."""
    torch = sys.modules["torch"]
    m = mask.to(torch.int32)
    leading = m.cumprod(dim=1).bool()
    trailing = m.flip(1).cumprod(dim=1).flip(1).bool()
    return leading | trailing


def _pad_id(entry):
    from ..models import base_model

    inner = entry.inner()
    config = getattr(base_model(inner), "config", None) if inner is not None else None
    value = getattr(config, "pad_token_id", None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _integer(t):
    torch = sys.modules["torch"]
    return isinstance(t, torch.Tensor) and not t.is_floating_point() and not t.is_complex() \
        and t.dtype != torch.bool and t.dim() >= 1


@probe("labels")
def root_forward_started(entry, args):
    """Remember the integer input of a root forward (positional) for a later loss call."""
    if _state.STATE.heavy and args and _integer(args[0]):
        _state.STATE.int_input = (entry, args[0].detach())
    _state.STATE.labels_candidate = None


@probe("labels")
def root_forward_ended(entry, args, kwargs):
    st = _state.STATE
    labels = kwargs.get("labels") if kwargs else None
    candidate, st.labels_candidate = st.labels_candidate, None
    if not st.heavy:
        return
    ids = kwargs.get("input_ids") if kwargs else None
    if ids is None and args and _integer(args[0]):
        ids = args[0]
    if _integer(labels):
        entry.takes_labels = True
        if (_integer(ids) and labels.shape == ids.shape
                and st.within_budget("labels", sys.modules["torch"].is_grad_enabled())):
            record = compare(entry, ids, labels, HF_IGNORE_INDEX, kwargs.get("attention_mask"),
                             "kwargs", entry.shifts_labels)
            if record is not None:
                st.emit("labels", **record)
        st.int_input = None
        return
    if candidate is not None:
        st.emit("labels", **candidate)
    elif _integer(ids):
        st.int_input = (entry, ids.detach())
