"""The few torch functions and methods replaced by thin wrappers, where no public hook exists:

  torch.optim.Optimizer.__init__          where an optimizer was built (then the trace starts)
  torch.autograd.grad                     a hand-written update's gradients (probes/manual.py)
  torch.nn.functional losses              loss_call / labels (probes/labels.py), targets out
                                          of range (probes/ranges.py)
  torch.nn.functional.embedding           ids out of range (probes/ranges.py)
  torch.nn.utils.rnn.pack_padded_sequence integer sequences packed, unpacked as labels
                                          (probes/labels.py)
  torch.nn.functional dropouts, sdpa      dropout_in_eval (probes/mode.py)
  DataLoader.__init__ / __iter__          where a loader was built; which iterator is whose
  _BaseDataLoaderIter.__next__            batches and the time spent waiting for them
  DistributedSampler.set_epoch            the epochs the program passes
  torch.amp.GradScaler.scale              the scale, so a step's loss is reported unscaled
  torch.nn.Module.load_state_dict         what a load filled and left (probes/loads.py, which
                                          also wraps transformers' from_pretrained finish)
  GradScaler.unscale_ / update            whether a clip saw scaled gradients (probes/clip.py)
  torch.nn.utils.clip_grad_norm_ /        each clip: its threshold, the norm it returned, the
    clip_grad_value_                      scale still on the gradients (probes/clip.py)

Each wrapper calls the original with the same arguments and returns its result unchanged (or
re-raises its exception unchanged); `functools.wraps` keeps names and docs. While torch.compile
traces, a wrapper is the original (`torch.compiler.is_compiling()` is constant then, so the
probe branch is not traced). For TorchScript, a wrapped Python function runs with the globals
of the original's module (TorchScript compiles the original's source, found through
`__wrapped__`, and resolves its names through the wrapper), and a wrapped builtin is
registered as the same builtin operator: scripted code calls the originals, unobserved.

What it never does: patch anything the program has not imported already (all of these live in
modules `import torch` loads), or wrap twice.
"""

import functools
import sys
import time
import types
import weakref

from . import hooks
from . import state as _state
from .probes import carried, manual, stages
from .probes import clip
from .probes import data, labels, loads, mode, optim, ranges, syncs

SCALED_KEPT_MAX = 64  # GradScaler outputs remembered until their backward


def _patch(owner, name, make):
    original = getattr(owner, name, None)
    if original is None or getattr(original, "_mldebug_wrapped", False):
        return
    wrapper = make(original)
    syncs.PASS_THROUGH.add(wrapper.__code__)
    if isinstance(original, types.FunctionType) and not isinstance(owner, type):
        wrapper = _with_globals_of(wrapper, original)
    wrapper._mldebug_wrapped = True
    _register_builtin(wrapper, original)
    setattr(owner, name, wrapper)


def _with_globals_of(wrapper, original):
    """The same wrapper (code and closure) whose globals are the original's module's."""
    rebuilt = types.FunctionType(wrapper.__code__, original.__globals__, wrapper.__name__,
                                 wrapper.__defaults__, wrapper.__closure__)
    rebuilt.__kwdefaults__ = wrapper.__kwdefaults__
    return functools.update_wrapper(rebuilt, original)


def _register_builtin(wrapper, original):
    builtins = sys.modules.get("torch.jit._builtins")
    try:
        op = builtins._find_builtin(original) if builtins is not None else None
        if op is not None:
            builtins._register_builtin(wrapper, op)
    except Exception:  # TorchScript's tables are private: without them, nothing to register
        pass


def _optimizer_init(original):
    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        optim.constructed(self)

    return __init__


def _loader_init(original):
    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        data.constructed(self)

    return __init__


def _loader_iter(original):
    @functools.wraps(original)
    def __iter__(self):
        iterator = original(self)
        data.iteration_started(self, iterator)
        return iterator

    return __iter__


def _iterator_next(original):
    @functools.wraps(original)
    def __next__(self):
        started = time.perf_counter()
        try:
            batch = original(self)
        except StopIteration:
            data.exhausted(self)
            raise
        data.drawn(self, batch, time.perf_counter() - started)
        return batch

    return __next__


def _set_epoch(original):
    @functools.wraps(original)
    def set_epoch(self, epoch, *args, **kwargs):
        result = original(self, epoch, *args, **kwargs)
        data.set_epoch_called(self, epoch)
        return result

    return set_epoch


@_state.probe("amp")
def _remember_scale(scaler, outputs, scaled):
    st = _state.STATE
    torch_tensor = type(outputs)
    if scaled is outputs or not hasattr(scaled, "numel") or scaled.numel() != 1:
        return
    if len(st.scaled) >= SCALED_KEPT_MAX:
        st.scaled.clear()
    scale = getattr(scaler, "_scale", None)
    if scale is not None and isinstance(scaled, torch_tensor):
        st.scaled[id(scaled)] = (weakref.ref(scaled), scale, weakref.ref(outputs))


def _scaler_scale(original):
    @functools.wraps(original)
    def scale(self, outputs, *args, **kwargs):
        scaled = original(self, outputs, *args, **kwargs)
        _remember_scale(self, outputs, scaled)
        if scaled is not outputs:
            clip.scaled(self)
        return scaled

    return scale


def _scaler_unscale(original):
    @functools.wraps(original)
    def unscale_(self, optimizer, *args, **kwargs):
        result = original(self, optimizer, *args, **kwargs)
        clip.unscaled(self, optimizer)
        return result

    return unscale_


def _scaler_update(original):
    @functools.wraps(original)
    def update(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        clip.updated(self)
        return result

    return update


def install_patches(torch):
    F = torch.nn.functional
    _patch(torch.optim.Optimizer, "__init__", _optimizer_init)
    _patch(torch.autograd, "backward", hooks.wrap_backward)
    _patch(torch.autograd, "grad", lambda fn: manual.wrap_grad(
        fn, hooks._before_backward, carried.after_backward, stages.mark))
    for name in labels.LOSS_FUNCTIONS:
        _patch(F, name, labels.wrap_loss)
    _patch(F, "embedding", ranges.wrap_embedding)
    _patch(sys.modules.get("torch.nn.utils.rnn"), "pack_padded_sequence", labels.wrap_pack)
    for name, training_default in mode.DROPOUT_FUNCTIONS:
        _patch(F, name, lambda fn, d=training_default: mode.wrap_dropout(fn, d))
    _patch(F, "scaled_dot_product_attention", mode.wrap_sdpa)
    loader = torch.utils.data.DataLoader
    _patch(loader, "__init__", _loader_init)
    _patch(loader, "__iter__", _loader_iter)
    _patch(sys.modules["torch.utils.data.dataloader"]._BaseDataLoaderIter, "__next__",
           _iterator_next)
    _patch(sys.modules["torch.utils.data.distributed"].DistributedSampler, "set_epoch",
           _set_epoch)
    _patch(torch.amp.GradScaler, "scale", _scaler_scale)
    _patch(torch.nn.Module, "load_state_dict", loads.wrap_load_state_dict)
    loads.install(torch)
    _patch(torch.amp.GradScaler, "unscale_", _scaler_unscale)
    _patch(torch.amp.GradScaler, "update", _scaler_update)
    clip_grad = sys.modules["torch.nn.utils.clip_grad"]
    for owner in (torch.nn.utils, clip_grad):
        _patch(owner, "clip_grad_norm_", clip.wrap_norm)
        _patch(owner, "clip_grad_value_", clip.wrap_value)
