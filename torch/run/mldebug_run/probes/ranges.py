"""Ids and class targets out of range: `out_of_range` records.

What must hold: every id an embedding lookup (`F.embedding`, which `nn.Embedding` calls) reads
is in [0, rows of its weight); every integer target of `cross_entropy` or `nll_loss` is in
[0, C) or equal to its `ignore_index`. An id past the table (tokens added to a tokenizer, the
embedding never resized) or a target equal to C (labels counted from 1) stops the program: on
a CPU with IndexError ("index out of range in self", "Target 10 is out of bounds"), on CUDA
with "device-side assert triggered", reported at whatever later line synchronises.

When it looks:
  before  on the heavy steps, at each call (at most CHECKS_PER_STEP per step), before the
          kernel runs: the ids' (targets') minimum and maximum, one synchronisation, as the
          heavy steps make anyway. A record is written before the kernel fails.
  raised  on any step, a call that raised, with its ids (targets) on the CPU: they are read
          then, on the way out. A call that does not raise costs nothing here.
On CUDA after the heavy steps nothing is read (every read would wait for the device), so an id
out of range first met there is not recorded; the PLAYBOOK row says how to find it.

One record per site (an embedding module, or a loss function), written once: the module's
qualified name, the weight's rows or the input's classes, the offending minimum and maximum,
how many positions are out of range of how many, whether the ids count up by one (position
ids: a sequence longer than the position table), and, for an embedding, the model config's
`vocab_size` and the length of a tokenizer found among the program's variables when one is.

What it never does: change the ids, the targets or a result; raise into the program (the
original exception goes on unchanged).
"""

import functools
import sys

from .. import state as _state
from ..state import compiling_check, probe
from ..where import user_frames, where
from .calls import bound_arguments

# Calls checked before the kernel per step interval, with gradients on and off: an evaluation
# loop before the first step must not synchronise at every batch.
CHECKS_PER_STEP = {True: 32, False: 4}
TARGET_FUNCTIONS = ("cross_entropy", "nll_loss")


def wrap_embedding(fn):
    # Closure variables only: patches.py runs this with the globals of torch.nn.functional.
    state, before, raised, compiling = _state, embedding_before, embedding_raised, \
        compiling_check()

    @functools.wraps(fn)
    def embedding(input, weight, *args, **kwargs):
        st = state.STATE
        if st is None or st.ended or compiling():
            return fn(input, weight, *args, **kwargs)
        if st.heavy:
            before(input, weight, args, kwargs)
        try:
            return fn(input, weight, *args, **kwargs)
        except Exception:
            raised(input, weight, args, kwargs)
            raise

    return embedding


def _plain(torch, t):
    """A plain integer tensor with values to read (no meta, fake or wrapped tensor), and not on
    a CUDA stream being captured into a graph (a read there would break the capture)."""
    return (type(t) is torch.Tensor and t.device.type != "meta" and not t.is_floating_point()
            and not t.is_complex() and t.dtype != torch.bool and t.numel() > 0
            and not (t.is_cuda and torch.cuda.is_current_stream_capturing()))


def _budget(st, torch):
    key = ("ranges", bool(torch.is_grad_enabled()))
    used = st.interval.budget.get(key, 0)
    if used >= CHECKS_PER_STEP[key[1]]:
        return False
    st.interval.budget[key] = used + 1
    return True


def _out_of_range(torch, values, limit, ignore_index=None):
    """(min, max, count) of the values outside [0, limit) that are not `ignore_index`, or
    None when all are in range. One synchronisation when all are (the common case)."""
    with torch.no_grad():
        v = values.detach()
        lo, hi = torch.stack(list(torch.aminmax(v))).tolist()
        if lo >= 0 and hi < limit:
            return None
        bad = (v < 0) | (v >= limit)
        if ignore_index is not None:
            bad &= v != ignore_index
        count = int(bad.sum())
        if not count:
            return None
        lo, hi = torch.stack(list(torch.aminmax(v[bad]))).tolist()
        return lo, hi, count


@probe("ranges")
def embedding_before(input, weight, args, kwargs):
    torch = sys.modules["torch"]
    st = _state.STATE
    if not _plain(torch, input) or not hasattr(weight, "shape") or not _budget(st, torch):
        return
    _embedding_check(torch, input, weight, args, kwargs, "before")


@probe("ranges")
def embedding_raised(input, weight, args, kwargs):
    torch = sys.modules["torch"]
    if _plain(torch, input) and input.device.type == "cpu" and hasattr(weight, "shape"):
        _embedding_check(torch, input, weight, args, kwargs, "raised")


def _embedding_check(torch, input, weight, args, kwargs, when):
    from ..models import name_of
    from ..stack import current_module

    st = _state.STATE
    rows = int(weight.shape[0])
    found = _out_of_range(torch, input, rows)
    if found is None:
        return
    module = current_module()
    # nn.Embedding calls F.embedding with its own weight: the module is the one being run.
    if module is not None and getattr(module, "weight", None) is not weight:
        module = None
    weight_name = name_of(weight)
    module_name = name_of(module) if module is not None else None
    if module_name is None and weight_name is not None:
        module_name = weight_name.rpartition(".")[0]  # the weight's owner ("" for the root)
    site = ("out_of_range", "embedding:%s" % (module_name or id(weight)))
    if site in st.reported:
        return
    st.reported.add(site)
    padding_idx = kwargs.get("padding_idx", args[0] if args else None)
    entry, vocab_size = _model_of(module)
    lo, hi, count = found
    consecutive = input.dim() >= 1 and input.shape[-1] > 1 and bool(
        (input.detach().diff(dim=-1) == 1).all())  # position ids: sequences past the table
    st.emit("out_of_range", step=st.step, check="embedding", fn="embedding", when=when,
            module=module_name, **{"class": type(module).__name__ if module is not None else None},
            weight=weight_name, model=entry.index if entry is not None else None,
            rows=rows, classes=None, min=lo, max=hi, out_of_range=count,
            positions=input.numel(), ignore_index=None, padding_idx=padding_idx,
            consecutive=consecutive, dtype=str(input.dtype).replace("torch.", ""), device=str(input.device),
            vocab_size=vocab_size, tokenizer_length=_tokenizer_length(),
            grad_enabled=torch.is_grad_enabled(), where=where(1), frames=user_frames(1))


@probe("ranges")
def targets_before(name, fn, args, kwargs):
    """From the loss wrapper on a heavy step, before the loss runs."""
    torch = sys.modules["torch"]
    if name in TARGET_FUNCTIONS and _budget(_state.STATE, torch):
        _targets_check(name, fn, args, kwargs, "before")


@probe("ranges")
def targets_raised(name, fn, args, kwargs):
    """From the loss wrapper, when the loss raised (any step)."""
    if name in TARGET_FUNCTIONS:
        _targets_check(name, fn, args, kwargs, "raised")


@probe("ranges")
def _targets_check(name, fn, args, kwargs, when):
    torch = sys.modules["torch"]
    st = _state.STATE
    a = bound_arguments(fn, args, kwargs)
    x, target = a.get("input"), a.get("target")
    if not isinstance(x, torch.Tensor) or not _plain(torch, target) or x.dim() == 0:
        return
    if when == "raised" and target.device.type != "cpu":
        return
    site = ("out_of_range", "target:%s" % name)
    if site in st.reported:
        return
    classes = int(x.shape[1] if x.dim() >= 2 else x.shape[0])
    ignore_index = a.get("ignore_index")
    found = _out_of_range(torch, target, classes, ignore_index)
    if found is None:
        return
    st.reported.add(site)
    lo, hi, count = found
    st.emit("out_of_range", step=st.step, check="target", fn=name, when=when, module=None,
            **{"class": None}, weight=None, model=None, rows=None, classes=classes, min=lo,
            max=hi, out_of_range=count, positions=target.numel(), ignore_index=ignore_index,
            padding_idx=None, consecutive=False, dtype=str(target.dtype).replace("torch.", ""),
            device=str(target.device), vocab_size=None, tokenizer_length=None,
            grad_enabled=torch.is_grad_enabled(), where=where(1), frames=user_frames(1))


def _model_of(module):
    """(the ModelEntry of the root being run, its config's vocab_size or None)."""
    from ..models import base_model
    from ..stack import current_root

    st = _state.STATE
    root = current_root()
    entry = st.models.get(id(root)) if root is not None else None
    if entry is None or entry.ref() is not root:
        return None, None
    inner = entry.inner()
    config = getattr(base_model(inner), "config", None) if inner is not None else None
    vocab = getattr(config, "vocab_size", None)
    return entry, vocab if isinstance(vocab, int) and not isinstance(vocab, bool) else None


def _is_tokenizer(obj):
    """A transformers tokenizer, or an object that adds tokens and has a length."""
    base = getattr(sys.modules.get("transformers.tokenization_utils_base"),
                   "PreTrainedTokenizerBase", None)
    if base is not None and isinstance(obj, base):
        return True
    cls = type(obj)
    return callable(getattr(cls, "add_tokens", None)) and callable(getattr(cls, "__len__", None))


def _tokenizer_length():
    """len() of the first tokenizer among the variables of the frames being run (and the main
    module's globals), or None; also one held by such a variable as `tokenizer` or
    `processing_class` (a Trainer). Only on the way to a record: it walks the stack once."""
    try:
        frame = sys._getframe(2)
    except ValueError:
        return None
    spaces = []
    while frame is not None:
        spaces.append(frame.f_locals)
        frame = frame.f_back
    main = sys.modules.get("__main__")
    if main is not None:
        spaces.append(vars(main))
    for space in spaces:
        for value in list(space.values()):
            held = getattr(value, "__dict__", None)
            candidates = [value]
            if isinstance(held, dict):
                candidates += [held.get("tokenizer"), held.get("processing_class")]
            for c in candidates:
                if c is not None and not isinstance(c, type) and _is_tokenizer(c):
                    try:
                        return len(c)
                    except Exception:
                        continue
    return None
