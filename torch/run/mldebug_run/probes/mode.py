"""Module modes: `mode` records, at most one per event and module.

  train_step_in_eval          a grad-enabled root forward in eval mode, followed by a backward
  eval_forward_in_train_mode  a root forward under no_grad/inference_mode in training mode, with
                              a dropout or BatchNorm inside it that this changes
  dropout_in_eval             functional dropout (or scaled_dot_product_attention's dropout_p)
                              with training on and p > 0, called inside a module in eval mode
  batchnorm_updated_in_eval   a BatchNorm's running statistics updated during a no_grad forward
                              (its `num_batches_tracked` counter was written: a version check,
                              no read of the tensor)

What it never does: change a mode, read a tensor's values, or call `train()`/`eval()`.
"""

import functools
import sys

from .. import models
from .. import state as _state
from ..state import compiling_check, probe
from ..where import where

# (function name, its `training` default): alpha dropouts default to training=False.
DROPOUT_FUNCTIONS = (("dropout", True), ("dropout1d", True), ("dropout2d", True),
                     ("dropout3d", True), ("alpha_dropout", False),
                     ("feature_alpha_dropout", False))


def _emit(event, module, where_text, key=None):
    st = _state.STATE
    key = (event, id(module) if key is None else key)
    if key in st.reported:
        return
    st.reported.add(key)
    st.emit("mode", step=st.step, event=event, module=models.name_of(module),
            **{"class": type(module).__name__}, where=where_text)


@probe("mode")
def note_root_forward(entry, module, grad_enabled):
    """A root forward ended: remember a training forward in eval mode; report an evaluation
    forward in training mode that has dropout or BatchNorm active."""
    if grad_enabled:
        if not module.training and entry.eval_training_forward is False:
            entry.eval_training_forward = where(3)
        return
    if not module.training or ("eval_forward_in_train_mode", id(module)) in _state.STATE.reported:
        return
    active = _active_stochastic(entry)
    if active is not None:
        _emit("eval_forward_in_train_mode", active, where(3), key=id(module))


def _active_stochastic(entry):
    torch = sys.modules["torch"]
    inner = entry.inner()
    if inner is None:
        return None
    if not hasattr(entry, "stochastic"):
        entry.stochastic = [m for m in inner.modules()
                            if (isinstance(m, torch.nn.modules.dropout._DropoutNd) and m.p > 0)
                            or (isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
                                and m.track_running_stats)]
    for m in entry.stochastic:
        if m.training:
            return m
    return None


@probe("mode")
def note_backward():
    """A backward: a grad-enabled eval-mode forward before it was a training step in eval."""
    for entry in _state.STATE.model_list:
        if entry.eval_training_forward:
            module = entry.ref()
            if module is not None:
                _emit("train_step_in_eval", module, entry.eval_training_forward)
            entry.eval_training_forward = False


@probe("mode")
def batchnorm_version(module):
    """Before a no_grad forward of a BatchNorm in training mode: its counter's version."""
    counter = getattr(module, "num_batches_tracked", None)
    return None if counter is None else counter._version


@probe("mode")
def batchnorm_after(module, version):
    counter = getattr(module, "num_batches_tracked", None)
    if counter is not None and counter._version != version:
        _emit("batchnorm_updated_in_eval", module, where(3))


def _innermost_in_eval():
    from ..stack import current_module

    module = current_module()
    return module if module is not None and not module.training else None


@probe("mode")
def _dropout_called(name):
    module = _innermost_in_eval()
    if module is not None:
        _emit("dropout_in_eval", module, where(3), key=(id(module), name))


# The wrappers below use closure variables only, no globals of this module: patches.py runs a
# wrapped Python function with the globals of the original's module (for TorchScript).


def wrap_dropout(fn, training_default):
    called, compiling, name = _dropout_called, compiling_check(), fn.__name__

    @functools.wraps(fn)
    def dropout(*args, **kwargs):
        if not compiling():
            p = args[1] if len(args) > 1 else kwargs.get("p", 0.5)
            training = args[2] if len(args) > 2 else kwargs.get("training", training_default)
            if training and isinstance(p, (int, float)) and p > 0:
                called(name)
        return fn(*args, **kwargs)

    return dropout


def wrap_sdpa(fn):
    called, compiling = _dropout_called, compiling_check()

    @functools.wraps(fn)
    def scaled_dot_product_attention(*args, **kwargs):
        if not compiling():
            p = args[4] if len(args) > 4 else kwargs.get("dropout_p", 0.0)
            if isinstance(p, (int, float)) and p > 0:
                called("scaled_dot_product_attention")
        return fn(*args, **kwargs)

    return scaled_dot_product_attention
