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
import sys
import warnings

from . import models, stop, window
from . import state as _state
from .stack import TLS as _tls
from .stack import stack as _stack
from .probes import carried, data, labels, losses, manual, mode, nonfinite, optim, stages
from .probes.tensors import new_hash, tensor_digest_into, tensors_in

_MISSING = object()
_compiling = _state.compiling_check()


def forward_pre(module, args):
    if _compiling():
        return  # torch.compile traces this call: nothing of ours in its graph
    stack = _stack()
    st = _state.STATE
    torch = sys.modules["torch"]
    if not stack and not st.in_backward and not st.ended:
        try:
            _root_pre(st, module, args)
        except Exception as err:
            st.fail("forward", err)
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


def _root_pre(st, module, args):
    _tls.input_wanted = False
    entry = models.lookup(module)
    if entry is None:
        return
    _tls.root = module
    _tls.root_grad = sys.modules["torch"].is_grad_enabled()
    if _tls.root_grad:
        # A hand-written update's step ends where the next forward begins.
        _end_window(manual.boundary())
    if st.first_forward is None:
        st.first_forward = st.now()
    if st.interval.start is None:
        st.interval.start = st.first_forward
    _tls.input_wanted = _tls.root_grad and st.heavy and st.interval.input is None
    if _tls.root_grad:
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
        _fingerprint_batch(iv, args, kwargs)
        if _tls.input_wanted:
            stages.note_input(entry, args, kwargs, _tls.autocast)
    else:
        iv.nograd_forwards += 1
    _tls.input_wanted = False
    mode.note_root_forward(entry, module, grad)
    data.note_forward(grad, module.training)
    _note_window(st, entry, module, grad)
    labels.root_forward_ended(entry, args, kwargs)
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
            tensor_digest_into(iv.batch, t)
        for key in sorted(kwargs) if kwargs else ():
            for t in tensors_in(kwargs[key]):
                iv.batch.update(key.encode())
                tensor_digest_into(iv.batch, t)


@_state.probe("backward")
def _before_backward(args, kwargs):
    torch = sys.modules["torch"]
    st = _state.STATE
    tensors = args[0] if args else kwargs.get("tensors")
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
    losses.at_backward(loss)
    st.interval.backwards += 1
    st.totals["backwards"] += 1
    st.interval.loss = value
    nonfinite.loss_value(value)
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
        mark("backward")
        before(args, kwargs)
        st.in_backward += 1
        try:
            return original(*args, **kwargs)
        finally:
            st.in_backward -= 1
            try:
                after()
                mark("backward_end")
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
    module_mod.register_module_forward_pre_hook(forward_pre)
    module_mod.register_module_forward_hook(forward_post, with_kwargs=True, always_call=True)
    optimizer_mod = sys.modules["torch.optim.optimizer"]
    optimizer_mod.register_optimizer_step_pre_hook(optim.step_pre)
    optimizer_mod.register_optimizer_step_post_hook(_step_post)
