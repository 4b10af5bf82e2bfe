"""The hooks every training program passes through: global module forward hooks, global
optimizer step hooks, and the wrapper around `torch.autograd.backward` (which
`Tensor.backward` calls).

The module hooks run for every module call, so on their common path they only push and pop a
thread-local stack of the modules being run; work happens at a root module's forward (the
stack is empty) and, after a non-finite loss, in one forward's per-module output check.

What they never do: replace a module's inputs or outputs (every hook returns None), change a
mode or a gradient, or let an exception of their own reach the program.
"""

import functools
import math
import sys
import threading
import time
import warnings

from . import models, stop, window
from . import state as _state
from .stack import BUSY as _BUSY
from .stack import TLS as _tls
from .stack import stack as _stack
from .probes import (carried, data, labels, losses, manual, mode, nonfinite, optim, saturation,
                     stages)
from .probes.tensors import new_hash, tensor_digest, tensors_in

_MISSING = object()
_compiling = _state.compiling_check()
_ident = threading.get_ident
# The global hooks as registered: torch's module (its hook dictionaries) and our two ids.
_GLOBAL = {"module": None, "pre": None, "post": None, "compiled": False}
_stale = []  # handles of root hooks left on a module by a forward that raised


def forward_pre(module, args):
    if _compiling():
        return  # torch.compile traces this call: nothing of ours in its graph
    stack = _stack()
    st = _state.STATE
    torch = sys.modules["torch"]
    if not stack:
        _BUSY.add(_ident())
    if not stack and not st.in_backward and not st.ended:
        try:
            _root_pre(st, module, args)
        except Exception as err:
            st.fail("forward", err)
        if _tls.root is module and not st.heavy:
            _suspend(st, module)
    elif _tls.input_wanted and len(stack) == 1 and _tls.autocast is None:
        # The root's first child: an autocast entered inside the root's own forward (as
        # accelerate wraps it) is on now, not around the root's call.
        _tls.autocast = stages.autocast_now(_tls.device_type)
    if module.training and not torch.is_grad_enabled() and isinstance(
            module, torch.nn.modules.batchnorm._BatchNorm):
        version = mode.batchnorm_version(module)
        if version is not None:
            _tls.batchnorm[id(module)] = version
    stack.append(module)


def forward_post(module, args, kwargs, result=_MISSING):
    if _compiling():
        return
    if result is _MISSING:  # the always_call path after an exception passes no kwargs
        result, kwargs = kwargs, None
    stack = _stack()
    if stack and stack[-1] is module:
        stack.pop()
    else:
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is module:
                del stack[i:]
                break
    if not stack:
        _BUSY.discard(_ident())
    st = _state.STATE
    if st.check_forward:
        nonfinite.check_output(module, args, result)
    if _tls.batchnorm:
        version = _tls.batchnorm.pop(id(module), None)
        if version is not None:
            mode.batchnorm_after(module, version)
    if not stack and _tls.root is module:
        _tls.root = None
        try:
            _root_post(st, module, args, kwargs or {})
        except Exception as err:
            st.fail("forward", err)


@_state.probe("suspend")
def _suspend(st, module):
    """A light step's training forward of a model: take the global hooks off while it runs,
    so its submodules are called as without the probes (torch skips its hook machinery for a
    module when no hook is registered; with one, each submodule costs microseconds). The model's
    own end is watched by a hook on it for this one call, which puts the global hooks back.
    Not when anything needs the submodules: the heavy steps, a forward without gradients or in
    eval mode (an evaluation: BatchNorm and dropout checks), the per-module non-finite check;
    nor while another thread runs a module, another library holds global module hooks, or
    torch.compile or tracing has compiled anything (its guards see the hooks)."""
    while _stale:
        _stale.pop().remove()
    mod = _GLOBAL["module"]
    if (not _tls.root_grad or not module.training or st.check_forward or len(_BUSY) != 1
            or mod is None or _compiled(module)):
        return
    pre, post = mod._global_forward_pre_hooks, mod._global_forward_hooks
    if len(pre) != 1 or len(post) != 1 or _GLOBAL["pre"] not in pre \
            or _GLOBAL["post"] not in post:
        return
    handle = module.register_forward_hook(_resume, with_kwargs=True, always_call=True)
    del pre[_GLOBAL["pre"]], post[_GLOBAL["post"]]
    _tls.suspended = (module, handle)


def _compiled(module):
    """Whether torch.compile has compiled a graph in this process (then never again False), or
    the model is a compiled or traced one."""
    if _GLOBAL["compiled"]:
        return True
    torch = sys.modules["torch"]
    utils = sys.modules.get("torch._dynamo.utils")
    try:
        counted = utils is not None and utils.counters["stats"]["unique_graphs"] > 0
    except Exception:
        counted = True  # unknown: keep the hooks
    if counted or torch._C._get_tracing_state() is not None \
            or type(module).__name__ == "OptimizedModule" \
            or isinstance(module, torch.jit.ScriptModule) \
            or getattr(module, "_compiled_call_impl", None) is not None:
        _GLOBAL["compiled"] = counted
        return True
    return False


def _resume(module, args, kwargs, result):
    """The suspended model's forward ended (or raised): the global hooks go back, in their
    place (ours are the only ones), and the root's end is measured as the global hook would."""
    suspended = getattr(_tls, "suspended", None)
    if suspended is None or suspended[0] is not module:
        return None
    _tls.suspended = None
    try:
        mod = _GLOBAL["module"]
        mod._global_forward_pre_hooks[_GLOBAL["pre"]] = forward_pre
        mod._global_forward_hooks[_GLOBAL["post"]] = forward_post
        if sys.exc_info()[0] is None:
            suspended[1].remove()
        else:  # torch is iterating the module's hooks (it raised): removed at the next forward
            _stale.append(suspended[1])
        forward_post(module, args, kwargs, result)
    except Exception as err:
        _state.STATE.fail("forward", err)
    return None


def _root_pre(st, module, args):
    _tls.input_wanted = False
    entry = models.lookup(module)
    if entry is None:
        return
    _tls.root = module
    _tls.root_grad = grad = sys.modules["torch"].is_grad_enabled()
    if grad and st.manual is not None:
        # A hand-written update's step ends where the next forward begins.
        _end_window(manual.boundary())
    if st.first_forward is None:
        st.first_forward = st.now()
    if st.interval.start is None:
        st.interval.start = st.first_forward
    if not st.heavy:  # the probes below act on the heavy steps only
        st.labels_candidate = None
        return
    _tls.input_wanted = grad and st.interval.input is None
    if grad:
        stages.mark("forward")
    if _tls.input_wanted:
        _tls.device_type = stages.device_type(entry)
        _tls.autocast = stages.autocast_now(_tls.device_type)
    labels.root_forward_started(entry, args)


def _root_post(st, module, args, kwargs):
    entry = st.models.get(id(module))
    if entry is None:
        return
    grad = _tls.root_grad
    iv = st.interval
    st.totals["forwards" if grad else "nograd_forwards"] += 1
    if grad:
        iv.forwards += 1
        iv.training = module.training if iv.training is None else (iv.training and module.training)
        if st.measuring or st.cadence.ranks:
            started = time.perf_counter()
            _fingerprint_batch(iv, args, kwargs)
            iv.measure_s += time.perf_counter() - started
        if _tls.input_wanted:
            stages.note_input(entry, args, kwargs, _tls.autocast)
    else:
        iv.nograd_forwards += 1
    _tls.input_wanted = False
    training = module.training
    if not (grad and training):  # a training forward in training mode is no mode event
        mode.note_root_forward(entry, module, grad)
    data.note_forward(grad, training)
    if not (grad and training and getattr(entry, "window_key", None) in st.window.trained):
        _note_window(st, entry, module, grad)
    if st.heavy:
        labels.root_forward_ended(entry, args, kwargs)
    else:
        st.labels_candidate = None  # what the labels probe does off the heavy steps
    st.check_forward = False  # armed for one forward only


@_state.probe("window")
def _note_window(st, entry, module, grad):
    window.note_forward(st, entry, module, grad, data.training_batch())


@_state.probe("batch")
def _fingerprint_batch(iv, args, kwargs):
    torch = sys.modules["torch"]
    if iv.batch is None:
        iv.batch = new_hash()
    with torch.no_grad():
        for t in tensors_in(args):
            iv.batch.update(tensor_digest(t))  # the loader's batch: digested when drawn
        for key in sorted(kwargs) if kwargs else ():
            for t in tensors_in(kwargs[key]):
                iv.batch.update(key.encode())
                iv.batch.update(tensor_digest(t))


@_state.probe("backward")
def _before_backward(args, kwargs):
    torch = sys.modules["torch"]
    st = _state.STATE
    tensors = args[0] if args else kwargs.get("tensors")
    # Leaf tensors of no module (no model, no optimizer): a step ends where the next backward
    # over the same ones begins (probes/manual.py).
    if not st.optimizers and not st.model_list:
        _end_window(manual.raw_backward(tensors))
    if isinstance(tensors, (list, tuple)) and tensors:
        tensors = tensors[0]
    value, loss = None, tensors
    if isinstance(tensors, torch.Tensor) and tensors.numel() == 1:
        v = tensors.detach()
        scaled = st.scaled.pop(id(tensors), None)
        if scaled is not None and scaled[0]() is tensors:
            v = v.double() / scaled[1].double()
            given = scaled[2]()  # the loss the scaler was given
            loss = tensors if given is None else given
        value = float(v)
    finite = value is None or math.isfinite(value)
    if not finite:
        st.cadence.always = True  # this step and every later one are measured
    losses.at_backward(loss, args, kwargs)  # every step's loss is watched, measured or not
    st.interval.backwards += 1
    st.totals["backwards"] += 1
    st.interval.loss = value
    if not finite:
        nonfinite.loss_value(value)
    if st.heavy or not finite:  # the graph is walked on heavy steps and at a non-finite loss
        saturation.at_backward(loss, value)
    mode.note_backward()
    carried.before_backward()


def wrap_backward(original):
    # Closure variables only: patches.py runs this with the globals of torch.autograd.
    state, before, after, compiling = _state, _before_backward, carried.after_backward, \
        _state.compiling_check()
    mark, manual_step = stages.mark, manual.after_backward

    @functools.wraps(original)
    def backward(*args, **kwargs):
        st = state.STATE
        if st is None or st.in_backward or st.ended or compiling():
            return original(*args, **kwargs)
        heavy = st.heavy
        if heavy:
            mark("backward")
        before(args, kwargs)
        st.in_backward += 1
        try:
            return original(*args, **kwargs)
        finally:
            st.in_backward -= 1
            try:
                after()
                if heavy:
                    mark("backward_end")
                if not st.optimizers:  # a hand-written update's step (probes/manual.py)
                    manual_step()
            except Exception as err:  # never the program's
                st.fail("backward", err)

    return backward


def _end_window(reason):
    """A step just counted ended the watched window (window.py's reason): the process ends."""
    if reason is not None:
        stop.finish("steps", window=reason)


def _step_post(opt, args, kwargs):
    """The global optimizer step post-hook: the step's measurement and count, then the end of
    the process when the window ends at this step."""
    _end_window(optim.step_post(opt, args, kwargs))


def install_hooks(torch):
    """Register the global hooks (module forward pre/post, optimizer step pre/post)."""
    # torch.compile(module) warns on every call when global module hooks exist; those are ours,
    # so the warning would be output the program does not have without us.
    warnings.filterwarnings("ignore", category=UserWarning,
                            message=r"Using `torch\.compile\(module\)` when there are global hooks")
    module_mod = sys.modules["torch.nn.modules.module"]
    pre = module_mod.register_module_forward_pre_hook(forward_pre)
    post = module_mod.register_module_forward_hook(forward_post, with_kwargs=True,
                                                   always_call=True)
    if hasattr(module_mod, "_global_forward_pre_hooks") and hasattr(
            module_mod, "_global_forward_hooks"):
        _GLOBAL.update(module=module_mod, pre=pre.id, post=post.id)
    optimizer_mod = sys.modules["torch.optim.optimizer"]
    optimizer_mod.register_optimizer_step_pre_hook(optim.step_pre)
    optimizer_mod.register_optimizer_step_post_hook(_step_post)
