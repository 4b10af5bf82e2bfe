"""Weights loaded into a module: `load` records, one per call of `nn.Module.load_state_dict`
and per transformers `from_pretrained`, and `load_trained` records when an optimizer that is
about to step holds parameters a load left at their initial values.

  load_state_dict   wrapped (patches.py's way: the original is called with the same arguments
                    and its result returned unchanged); after it returns, its `missing_keys` and
                    `unexpected_keys` are measured against the module's parameters
  from_pretrained   transformers' `PreTrainedModel._finalize_model_loading(model, config,
                    info)` (5.x), which every `from_pretrained` passes with the loading info
                    (missing, mismatched and unexpected keys): wrapped once transformers'
                    `modeling_utils` has been imported by the program (a meta-path finder
                    that looks at each later import and steps aside once it has wrapped)

A parameter "left at init" is one whose key the load reported missing (or, for
from_pretrained, mismatched), that is not the same tensor as a parameter the load filled under
another name (tied weights), and that no earlier recorded load filled. A later load that fills
it says so (`refills`). Loads made before the trace opens wait in the writer's buffer.

What it never does: read a tensor's values, change the state dict, the module or the result,
or keep a strong reference to a tensor (parameters are remembered by weak references).
"""

import functools
import sys
import threading
import weakref

from .. import state as _state
from ..state import compiling_check, probe
from ..where import where

NAMES_MAX = 5  # key names listed per list in a record
NAME_CHARS_MAX = 200  # a key name longer than this is cut
RECORDS_MAX = 32  # load records per process that report something missing or unexpected
QUIET_RECORDS_MAX = 8  # load records per process that filled every parameter
TRACKED_LOADS_MAX = 16  # loads whose parameters left at init are followed to an optimizer

_compiling = compiling_check()
_tls = threading.local()


class _Book:
    """What the loads of this process filled and left, by parameter identity."""

    def __init__(self):
        self.pid = None
        self.loads = 0  # load records written
        self.quiet = 0
        self.filled = {}  # id(param) -> weakref: filled by a recorded load
        self.left = {}  # id(param) -> (load index, weakref, numel): left at init by a load
        self.pending = {}  # load index -> set of optimizer ids already looked at

    def fresh(self):
        import os

        if self.pid != os.getpid():  # a forked child starts over, as the state does
            self.__init__()
            self.pid = os.getpid()
        return self


_BOOK = _Book()


def _alive(table, p):
    entry = table.get(id(p))
    if entry is None:
        return None
    ref = entry if isinstance(entry, weakref.ref) else entry[1]
    return entry if ref() is p else None


def _names(keys):
    out = []
    for k in keys:
        if len(out) >= NAMES_MAX:
            break
        k = str(k)
        out.append(k if len(k) <= NAME_CHARS_MAX else k[:NAME_CHARS_MAX])
    return out


def _parameters(module):
    try:
        return list(module.named_parameters(remove_duplicate=False))
    except TypeError:  # an older signature: tied names are then missed
        return list(module.named_parameters())


def _prefix(keys, others):
    """The one leading dotted component every key of `keys` shares, and how many of them,
    without it, are keys of `others`; (None, 0) when they share none."""
    keys = list(keys)
    if not keys:
        return None, 0
    heads = {k.split(".", 1)[0] for k in keys}
    if len(heads) != 1 or any("." not in k for k in keys):
        return None, 0
    head = heads.pop()
    return head, sum(1 for k in keys if k.split(".", 1)[1] in others)


def _account(module_params, left_names, index):
    """Split the parameters named in `left_names` into left at init and filled before; mark
    the rest filled (and earlier loads' parameters refilled). Returns (left [(name, p)],
    loaded_before_numel, refills {index: numel}, parameters_numel)."""
    book = _BOOK.fresh()
    filled_now = {}
    total = {}
    for name, p in module_params:
        total[id(p)] = p
        if name not in left_names:
            filled_now[id(p)] = p
    left, seen, before = [], set(), 0
    for name, p in module_params:
        if name not in left_names or id(p) in filled_now or id(p) in seen:
            continue
        seen.add(id(p))
        if _alive(book.filled, p) is not None:
            before += p.numel()
        else:
            left.append((name, p))
    refills = {}
    for p in filled_now.values():
        entry = _alive(book.left, p)
        if entry is not None:
            refills[entry[0]] = refills.get(entry[0], 0) + entry[2]
            del book.left[id(p)]
        book.filled[id(p)] = weakref.ref(p)
    if index is not None and len(book.pending) < TRACKED_LOADS_MAX:
        for _, p in left:
            book.left[id(p)] = (index, weakref.ref(p), p.numel())
        if left:
            book.pending[index] = set()
    return left, before, refills, sum(p.numel() for p in total.values())


def _next_index(something_to_say):
    book = _BOOK.fresh()
    if something_to_say:
        if book.loads >= RECORDS_MAX:
            return None
    elif book.quiet >= QUIET_RECORDS_MAX:
        return None
    else:
        book.quiet += 1
    book.loads += 1
    return book.loads - 1


@probe("loads")
def state_dict_loaded(module, state_dict, strict, assign, result):
    st = _state.STATE
    missing = [str(k) for k in (getattr(result, "missing_keys", None) or [])]
    unexpected = [str(k) for k in (getattr(result, "unexpected_keys", None) or [])]
    params = _parameters(module)
    missing_set = set(missing)
    index = _next_index(bool(missing or unexpected))
    left, before, refills, total = _account(params, missing_set, index)
    if index is None:
        return
    left_names = [n for n, _ in left]
    shapes = {}
    mappings = 0
    try:
        for k in unexpected:
            v = state_dict[k]
            shape = getattr(v, "shape", None)
            if shape is not None:
                shapes.setdefault(k.rsplit(".", 1)[-1], set()).add(tuple(shape))
            elif hasattr(v, "keys"):
                mappings += 1
    except Exception:  # a mapping that will not give its values back: no shapes
        shapes = {}
    renamed = sum(1 for n, p in left
                  if tuple(p.shape) in shapes.get(n.rsplit(".", 1)[-1], ()))
    unexpected_set = set(unexpected)
    u_head, u_matches = _prefix(unexpected, missing_set)
    m_head, m_matches = _prefix(missing, unexpected_set)
    try:
        keys = len(state_dict)
    except Exception:
        keys = None
    st.emit("load", step=st.step, load=index, source="load_state_dict",
            **{"class": type(module).__name__}, where=where(), strict=bool(strict),
            assign=bool(assign), keys=keys, parameters=total,
            missing=len(missing), unexpected=len(unexpected), mismatched=0,
            missing_tensors=len(left), missing_numel=sum(p.numel() for _, p in left),
            missing_loaded_numel=before, missing_base_numel=None, mismatched_numel=0,
            mismatched_base_numel=None,
            missing_names=_names(left_names + [k for k in missing if k not in set(left_names)]),
            unexpected_names=_names(unexpected), mismatched_names=[],
            unexpected_prefix=u_head, unexpected_prefix_matches=u_matches,
            missing_prefix=m_head, missing_prefix_matches=m_matches,
            renamed=renamed, unexpected_mappings=mappings,
            refills=[{"load": i, "numel": n} for i, n in sorted(refills.items())],
            ignore_mismatched_sizes=None)


@probe("loads")
def pretrained_loaded(model, config, info):
    st = _state.STATE
    missing = sorted(str(k) for k in (getattr(info, "missing_keys", None) or ()))
    unexpected = sorted(str(k) for k in (getattr(info, "unexpected_keys", None) or ()))
    mismatched = sorted(str(k[0] if isinstance(k, tuple) else k)
                        for k in (getattr(info, "mismatched_keys", None) or ()))
    params = _parameters(model)
    index = _next_index(bool(missing or unexpected or mismatched))
    left, before, refills, total = _account(params, set(missing) | set(mismatched), index)
    if index is None:
        return
    base = getattr(model, "base_model", model)
    base_ids = set()
    if base is not model and base is not None:
        base_ids = {id(p) for p in base.parameters()}
    mismatched_set = set(mismatched)
    left_mismatched = [p for n, p in left if n in mismatched_set]
    ignore = getattr(config, "ignore_mismatched_sizes", None)
    st.emit("load", step=st.step, load=index, source="from_pretrained",
            **{"class": type(model).__name__}, where=where(), strict=None, assign=None,
            keys=None, parameters=total, missing=len(missing), unexpected=len(unexpected),
            mismatched=len(mismatched), missing_tensors=len(left),
            missing_numel=sum(p.numel() for _, p in left), missing_loaded_numel=before,
            missing_base_numel=sum(p.numel() for n, p in left
                                   if id(p) in base_ids and n not in mismatched_set),
            mismatched_numel=sum(p.numel() for p in left_mismatched),
            mismatched_base_numel=sum(p.numel() for p in left_mismatched if id(p) in base_ids),
            missing_names=_names(n for n, _ in left if n not in mismatched_set),
            unexpected_names=_names(unexpected), mismatched_names=_names(mismatched),
            unexpected_prefix=None, unexpected_prefix_matches=0, missing_prefix=None,
            missing_prefix_matches=0, renamed=0, unexpected_mappings=0,
            refills=[{"load": i, "numel": n} for i, n in sorted(refills.items())],
            ignore_mismatched_sizes=None if ignore is None else bool(ignore))


@probe("loads")
def step_pre(optimizer, args, kwargs):
    """An optimizer is about to step: of each followed load's parameters left at init, the
    elements it holds (trainable) and those that no longer exist (a layer replaced after the
    load); each optimizer looked at once per load."""
    book = _BOOK
    if not book.pending:
        return
    st = _state.STATE
    ids = None
    for index in list(book.pending):
        looked = book.pending[index]
        if id(optimizer) in looked:
            continue
        looked.add(id(optimizer))
        if ids is None:
            ids = {id(p) for g in optimizer.param_groups for p in g["params"]
                   if getattr(p, "requires_grad", False)}
        numel = gone = 0
        for pid, (owner, ref, n) in list(book.left.items()):
            if owner != index:
                continue
            if ref() is None:
                gone += n
                del book.left[pid]
            elif pid in ids:
                numel += n
        if numel or gone:
            st.emit("load_trained", step=st.step, load=index, numel=numel, gone=gone)


def wrap_load_state_dict(original):
    @functools.wraps(original)
    def load_state_dict(self, state_dict, *args, **kwargs):
        if getattr(_tls, "depth", 0) or _compiling():
            return original(self, state_dict, *args, **kwargs)
        _tls.depth = 1
        try:
            result = original(self, state_dict, *args, **kwargs)
        finally:
            _tls.depth = 0
        strict = args[0] if args else kwargs.get("strict", True)
        assign = args[1] if len(args) > 1 else kwargs.get("assign", False)
        state_dict_loaded(self, state_dict, strict, assign, result)
        return result

    return load_state_dict


def _wrap_finalize(original):
    @functools.wraps(original)
    def _finalize_model_loading(model, load_config, loading_info, *args, **kwargs):
        info = original(model, load_config, loading_info, *args, **kwargs)
        pretrained_loaded(model, load_config, info if info is not None else loading_info)
        return info

    return _finalize_model_loading


@probe("loads")
def _patch_transformers():
    """Wrap `PreTrainedModel._finalize_model_loading` once transformers' modeling_utils has run;
    True once done (or when the installed transformers has no such method)."""
    mu = sys.modules.get("transformers.modeling_utils")
    cls = getattr(mu, "PreTrainedModel", None)
    if cls is None:
        return False
    raw = cls.__dict__.get("_finalize_model_loading")
    if raw is None:
        return True  # another transformers: from_pretrained is not followed
    fn = raw.__func__ if isinstance(raw, staticmethod) else raw
    if getattr(fn, "_mldebug_wrapped", False):
        return True
    wrapper = _wrap_finalize(fn)
    wrapper._mldebug_wrapped = True
    setattr(cls, "_finalize_model_loading",
            staticmethod(wrapper) if isinstance(raw, staticmethod) else wrapper)
    return True


class _TransformersWatcher:
    """A meta-path finder that finds nothing: at each import the program makes, it looks
    whether transformers' modeling_utils has finished, wraps it, and removes itself."""

    def find_spec(self, fullname, path=None, target=None):
        if _patch_transformers() is not False:
            self.remove()
        return None

    def remove(self):
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass


def install(torch):
    _BOOK.fresh()
    try:
        sys.modules["torch.optim.optimizer"].register_optimizer_step_pre_hook(step_pre)
    except Exception as err:
        _state.STATE.fail("loads", err)
    if _patch_transformers() is False:
        sys.meta_path.insert(0, _TransformersWatcher())
