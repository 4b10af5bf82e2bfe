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
Both read a 2-D input as batch-major (B, T) or time-major (T, B), whichever the labels match
one or two positions ahead; each record also counts the rows with no label the loss reads and
lists the token ids that the attended text holds as targets but that are ignored wherever they
occur (a pad id that is also a real token: pad = eos, pad = the space).

Packed sequences (`torch.nn.utils.rnn.pack_padded_sequence`, which `pack_sequence` calls): on
heavy steps each integer sequence packed is remembered (its data tensor by weak reference, its
batch sizes and orders, PACKED_KEPT at most). A root forward that receives a PackedSequence of
integers has it unpacked as its input, the positions past each length masked out; a loss whose
target is a remembered packed data tensor has it unpacked to the input's layout, the positions
past each length set to the loss's ignore index (the loss never read them).

What it never does: change the loss, its inputs or its value; it reads them under no_grad.
"""

import functools
import sys
import threading
import weakref

from .. import state as _state
from ..state import compiling_check, probe
from ..where import where
from . import ranges
from .calls import bound_arguments

LOSS_FUNCTIONS = ("cross_entropy", "nll_loss", "binary_cross_entropy_with_logits", "mse_loss")
ROWS_CHECKED = 4096  # rows checked for probabilities
ELEMENTS_CHECKED = 1 << 22  # ...and at most 4M elements of them: bounded for a 50k-class LM head
ROW_SUM_TOLERANCE = 1e-3  # a softmax row sums to 1 within float32 rounding over many classes
HF_IGNORE_INDEX = -100  # transformers' loss ignores this label
# Labels that match the inputs at one offset this often are aligned at that offset: then the
# target of each labelled position is known from the inputs, ignored or not.
ALIGNED = 0.9
MIN_TOKEN_POSITIONS = 2  # a token seen once as a target and ignored says nothing yet
NEVER_LISTED = 4  # the most frequent never-supervised tokens a record lists

PACKED_KEPT = 8  # integer sequences packed on a heavy step, remembered for the loss

_busy = threading.local()
_packed = []  # (weakref to a PackedSequence's data, batch_sizes, sorted, unsorted, batch_first)


def wrap_pack(fn):
    # Closure variables only: patches.py runs this with the globals of torch.nn.utils.rnn.
    state, remember, compiling = _state, packed, compiling_check()

    @functools.wraps(fn)
    def pack_padded_sequence(*args, **kwargs):
        out = fn(*args, **kwargs)
        st = state.STATE
        if st is not None and st.heavy and not compiling():
            remember(fn, args, kwargs, out)
        return out

    return pack_padded_sequence


@probe("labels")
def packed(fn, args, kwargs, out):
    """An integer sequence was packed: remember how, to unpack its data as a loss target."""
    if not _integer(getattr(out, "data", None)) or out.data.dim() != 1:
        return
    batch_first = bool(bound_arguments(fn, args, kwargs).get("batch_first", False))
    _packed.append((weakref.ref(out.data), out.batch_sizes, out.sorted_indices,
                    out.unsorted_indices, batch_first))
    del _packed[:-PACKED_KEPT]


def _packing_of(data):
    for ref, *how in reversed(_packed):
        if ref() is data:
            return how
    return None


def _unpack(data, how, padding_value):
    """(padded, lengths) of a packed data tensor, batch-first when `how` says so."""
    rnn = sys.modules["torch.nn.utils.rnn"]
    batch_sizes, sorted_indices, unsorted_indices, batch_first = how
    seq = rnn.PackedSequence(data, batch_sizes, sorted_indices, unsorted_indices)
    return rnn.pad_packed_sequence(seq, batch_first=batch_first, padding_value=padding_value)


def _length_mask(lengths, t, batch_first):
    torch = sys.modules["torch"]
    mask = torch.arange(t)[None, :] < lengths.to("cpu")[:, None]  # (B, T)
    return mask if batch_first else mask.t()


def packed_input(arg):
    """(padded ids, mask of real positions, time-major) of a PackedSequence of integers, else
    None."""
    data = getattr(arg, "data", None)
    if not _integer(data) or data.dim() != 1 or getattr(arg, "batch_sizes", None) is None:
        return None
    how = _packing_of(data) or [arg.batch_sizes, arg.sorted_indices, arg.unsorted_indices,
                                 False]
    padded, lengths = _unpack(data.detach(), how, 0)
    return padded, _length_mask(lengths, padded.shape[1 if how[3] else 0], how[3]).to(
        padded.device), not how[3]


def _packed_target(target, ignore_index, inputs, mask, time_major):
    """A loss target that is a remembered packed data tensor: (its labels unpacked to
    `inputs`' layout with `ignore_index` past each length, the mask of the positions within
    the lengths, whether that layout is time-major); else (the target, `mask`, `time_major`)
    as they are."""
    how = _packing_of(target) if target.dim() == 1 else None
    if how is None or inputs.dim() != 2:
        return target, mask, time_major
    b = int(how[0][0])
    if time_major is not None:
        batch_first = not time_major
    else:
        batch_first = inputs.shape[0] == b and (inputs.shape[1] != b or how[3])
    if inputs.shape[0 if batch_first else 1] != b:
        return target, mask, time_major
    how = list(how[:3]) + [batch_first]
    labels, lengths = _unpack(target.detach(), how, ignore_index)
    t = inputs.shape[1] if batch_first else inputs.shape[0]
    tl = labels.shape[1] if batch_first else labels.shape[0]
    if tl < t - 1:  # padded to the input's length, past it nothing the loss read
        torch = sys.modules["torch"]
        pad = (0, t - tl) if batch_first else (0, 0, 0, t - tl)
        labels = torch.nn.functional.pad(labels, pad, value=ignore_index)
    if mask is None and tl <= t:  # the inputs were packed with the targets' lengths
        mask = _length_mask(lengths, t, batch_first).to(inputs.device)
    return labels, mask, not batch_first


def wrap_loss(fn):
    # Closure variables only: patches.py runs this with the globals of torch.nn.functional.
    name, state, busy, called = fn.__name__, _state, _busy, loss_called
    compiling, grad_enabled = compiling_check(), sys.modules["torch"].is_grad_enabled
    before, raised = ranges.targets_before, ranges.targets_raised

    @functools.wraps(fn)
    def loss(*args, **kwargs):
        st = state.STATE
        if st is None or getattr(busy, "on", False) or compiling():
            return fn(*args, **kwargs)
        if st.heavy:
            before(name, fn, args, kwargs)  # targets out of range (probes/ranges.py)
        if not st.heavy or not st.within_budget("loss_call", grad_enabled()):
            try:
                return fn(*args, **kwargs)
            except Exception:
                raised(name, fn, args, kwargs)
                raise
        busy.on = True
        try:
            out = fn(*args, **kwargs)
        except Exception:
            raised(name, fn, args, kwargs)
            raise
        finally:
            busy.on = False
        called(name, fn, args, kwargs, out)
        return out

    return loss


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
    a = bound_arguments(fn, args, kwargs)
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
    from ..stack import current_root

    st = _state.STATE
    entry, inputs, mask, time_major = st.int_input
    st.int_input = None
    target, mask, time_major = _packed_target(target, ignore_index, inputs, mask, time_major)
    record = compare(entry, inputs, target, ignore_index, mask, "loss", False,
                     pad_from="lengths" if mask is not None else None, time_major=time_major)
    if record is None or not st.within_budget("labels", sys.modules["torch"].is_grad_enabled()):
        return
    if current_root() is not None:
        st.labels_candidate = record  # kept unless this forward received `labels`
    else:
        st.emit("labels", **record)


def compare(entry, inputs, labels, ignore_index, attention_mask, source, shifts,
            pad_from="attention_mask", time_major=None):
    """The `labels` record comparing integer `labels` with integer `inputs`; None when the
    shapes do not allow it. With `pad_from` "lengths" the mask holds a packed sequence's lengths:
    a label is compared with the input k ahead only where that input is within its row's
    length (past it is padding the program never fed). A 2-D input is read in both layouts
    (unless `time_major`, True or False, says which: a packed sequence's): batch-major (B, T)
    with labels (B, T) or (B, T-1), and time-major (T, B) with labels (T, B) or (T-1, B),
    flattened or not (word_language_model's batches). Time-major when only that reading has
    labels matching the inputs one or two positions ahead (ALIGNED), else batch-major: along
    the wrong axis a label meets a neighbouring sequence's token, which it matches by chance
    only."""
    torch = sys.modules["torch"]
    st = _state.STATE
    if inputs.dim() == 0 or labels.numel() == 0:
        return None
    with torch.no_grad():
        views = [] if time_major else [_view(inputs, labels, attention_mask, False)]
        if inputs.dim() == 2 and time_major is not False:
            views.append(_view(inputs, labels, attention_mask, True))
        views = [v for v in views if v is not None]
        if not views:
            return None
        lengths = pad_from == "lengths"
        stats = [_shares(v[0], v[1], v[1] != ignore_index, v[2] if lengths else None)
                 for v in views]
        ahead = [max(_z(st_[3]), _z(st_[4])) for st_ in stats]
        best = 0 if ahead[0] >= ALIGNED or len(views) == 1 else int(
            ahead[1] >= ALIGNED and ahead[1] > ahead[0])
        ids, lab, mask, time_major = views[best]
        positions, ignored, shares = stats[best][0], stats[best][1], stats[best][2:]
        tl = lab.shape[1]
        valid = lab != ignore_index
        named, pad_from, pad, pad_id = pad_from, None, None, _config_id(entry, "pad_token_id")
        if mask is not None:
            pad_from, pad = named, mask[:, :tl] == 0
        elif pad_id is not None:
            pad_from, pad = "pad_token_id", _edge_runs(ids == pad_id)[:, :tl]
        # Rows with nothing the loss reads (a model that shifts never reads label 0).
        read = valid[:, 1:] if shifts else valid
        counts = [(read.sum(1) == 0).sum()]
        if pad is not None:
            counts += [pad.sum(), (pad & valid).sum()]
        counts = torch.stack(counts).tolist()
        tokens = _never_supervised(ids, valid, mask, shares, shifts, pad_id,
                                   _config_id(entry, "bos_token_id"),
                                   _config_id(entry, "eos_token_id"))
    record = {"step": st.step, "model": entry.index, "shifts_labels": shifts,
              "grad_enabled": torch.is_grad_enabled(), "source": source,
              "layout": "time_major" if time_major else "batch_major",
              "positions": positions, "ignored": ignored,
              "equal_inputs": shares[0], "next_inputs": shares[1], "two_inputs": shares[2],
              "pad_token_id": pad_id, "eos_token_id": _config_id(entry, "eos_token_id"),
              "pad_from": pad_from,
              "pad_positions": counts[1] if pad is not None else None,
              "pad_labelled": counts[2] if pad is not None else None,
              "rows": ids.shape[0], "rows_unsupervised": counts[0]}
    record.update(tokens)
    return record


def _z(share):
    return share or 0.0


def _view(inputs, labels, attention_mask, time_major):
    """(ids (B, T), labels (B, TL), attention mask (B, T) or None, time_major) for one reading
    of the shapes, or None when the labels do not fit it."""
    if time_major:
        t, b = inputs.shape
        ids = inputs.detach().t()
    else:
        b = inputs.shape[0]
        ids = inputs.detach().reshape(b, -1)
        t = ids.shape[1]
    n = labels.numel()
    if n % b:
        return None
    tl = n // b
    if tl < 2 or tl not in (t, t - 1):
        return None
    lab = labels.detach().to(ids.device)
    lab = lab.reshape(tl, b).t() if time_major else lab.reshape(b, tl)
    mask = None
    if attention_mask is not None and attention_mask.shape == inputs.shape:
        mask = attention_mask.detach().to(ids.device)
        mask = mask.t() if time_major else mask.reshape(b, -1)
    return ids, lab, mask, time_major


def _shares(ids, lab, valid, real=None):
    """[positions, ignored, equal, next, two]: the labelled positions, the ignored ones, and the
    share of labelled positions whose label is the input at the same position, one ahead, two
    ahead in the row (None where no position is comparable); with `real` (B, T), only where the
    input k ahead is real."""
    torch = sys.modules["torch"]
    t, tl = ids.shape[1], lab.shape[1]
    counts = [valid.sum(), (~valid).sum()]
    for k in (0, 1, 2):
        m = min(tl, t - k)
        if m <= 0:
            counts += [valid.new_zeros((), dtype=torch.long)] * 2
            continue
        v = valid[:, :m] if real is None else valid[:, :m] & (real[:, k:k + m] != 0)
        counts += [((lab[:, :m] == ids[:, k:k + m]) & v).sum(), v.sum()]
    c = torch.stack(counts).tolist()
    return c[:2] + [c[i] / c[i + 1] if c[i + 1] else None for i in (2, 4, 6)]


def _never_supervised(ids, valid, mask, shares, shifts, pad_id, bos_id, eos_id):
    """The token ids that the attended text holds as targets and whose every such position is
    ignored: {"attended_targets", "supervised_targets", "never_supervised": [{"token",
    "positions", "isolated"}]}, the NEVER_LISTED most frequent. The target at label position j
    is the input at j + k, k being the offset at which the labels match the inputs (ALIGNED);
    none when they match at none. Attended: the attention mask, else not in a run of the
    config's pad id (or, without one, of the row's first or last id) at a row's edge. Isolated:
    an ignored position whose attended neighbours are all supervised: a collator that masks one
    id wherever it occurs, where one that masks spans (a prompt) leaves ignored neighbours.
    The config's BOS id, when it is not also the EOS id, is never listed: a packer that masks
    each document's first label (the BOS after the previous document) is right to."""
    torch = sys.modules["torch"]
    none = {"attended_targets": None, "supervised_targets": None, "never_supervised": None}
    aligned = [k for k, s in enumerate(shares) if s is not None and s >= ALIGNED]
    if not aligned:
        return none
    k = max(aligned, key=lambda i: shares[i])
    t, tl = ids.shape[1], valid.shape[1]
    m = min(tl, t - k)
    if m < 2:
        return none
    tok = ids[:, k:k + m].long()
    if bool((tok < 0).any()):
        return none
    if mask is not None:
        att = mask[:, k:k + m] != 0
    else:
        if pad_id is not None:
            edge = _edge_runs(ids == pad_id)
        else:
            lead = (ids == ids[:, :1]).to(torch.int32).cumprod(dim=1).bool()
            trail = (ids == ids[:, -1:]).to(torch.int32).flip(1).cumprod(dim=1).flip(1).bool()
            edge = lead | trail
        att = ~edge[:, k:k + m]
    if shifts:
        att = att.clone()
        att[:, 0] = False  # a model that shifts never reads label 0
    sup = att & valid[:, :m]
    ign = att & ~valid[:, :m]
    false = torch.zeros_like(att[:, :1])
    left_att, right_att = torch.cat([false, att[:, :-1]], 1), torch.cat([att[:, 1:], false], 1)
    left_sup, right_sup = torch.cat([false, sup[:, :-1]], 1), torch.cat([sup[:, 1:], false], 1)
    isolated = ign & (left_att | right_att) & (~left_att | left_sup) & (~right_att | right_sup)
    total = torch.bincount(tok[att])
    n = total.numel()
    supervised = torch.bincount(tok[sup], minlength=n)
    lone = torch.bincount(tok[isolated], minlength=n)
    never = (total >= MIN_TOKEN_POSITIONS) & (supervised == 0)
    if isinstance(bos_id, int) and bos_id != eos_id and 0 <= bos_id < n:
        never[bos_id] = False
    ids_never = never.nonzero().flatten()
    counts = total[ids_never]
    order = counts.argsort(descending=True)[:NEVER_LISTED]
    ids_never = ids_never[order]
    rows = torch.stack([ids_never, total[ids_never], lone[ids_never]], 1).tolist()
    sums = torch.stack([att.sum(), sup.sum()]).tolist()
    return {"attended_targets": sums[0], "supervised_targets": sums[1],
            "never_supervised": [{"token": a, "positions": b, "isolated": c} for a, b, c in rows]}


def _edge_runs(mask):
    """The positions of `mask` (B, T) in a run that starts at a row's first or ends at its last
    position: padding is at the edges; the pad token in mid-row is an ordinary token (a
    vocabulary whose pad id is also a real token, such as GPT-2 with pad = eos, or id 0)."""
    torch = sys.modules["torch"]
    m = mask.to(torch.int32)
    leading = m.cumprod(dim=1).bool()
    trailing = m.flip(1).cumprod(dim=1).flip(1).bool()
    return leading | trailing


def _config_id(entry, name):
    """The model config's `pad_token_id`, `eos_token_id` or `bos_token_id` (the first of a list),
    else None."""
    from ..models import base_model

    inner = entry.inner()
    config = getattr(base_model(inner), "config", None) if inner is not None else None
    value = getattr(config, name, None)
    if isinstance(value, (list, tuple)) and value:
        value = value[0]
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _integer(t):
    torch = sys.modules["torch"]
    return isinstance(t, torch.Tensor) and not t.is_floating_point() and not t.is_complex() \
        and t.dtype != torch.bool and t.dim() >= 1


@probe("labels")
def root_forward_started(entry, args):
    """Remember the integer input of a root forward (positional) for a later loss call."""
    if _state.STATE.heavy and args and _integer(args[0]):
        _state.STATE.int_input = (entry, args[0].detach(), None, None)
    elif _state.STATE.heavy and args and type(args[0]).__name__ == "PackedSequence":
        unpacked = packed_input(args[0])
        if unpacked is not None:
            _state.STATE.int_input = (entry,) + unpacked
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
        st.int_input = (entry, ids.detach(), None, None)
