"""Host-device synchronisations the program makes per step, on CUDA.

torch's synchronisation debug mode (`torch.cuda.set_sync_debug_mode("warn")`) makes every
operation that waits for the GPU (`.item()`, `.cpu()`, `.tolist()`, printing a tensor, a Python
condition on a tensor's value, `nonzero`, `torch.cuda.synchronize()`) raise a warning from the
Python line that called it. This probe turns the mode on for the intervals that lead to
optimizer 0's steps FIRST..LAST (step 1 holds one-time work: lazy initialisation, cuDNN's
autotuning), counts those warnings by the user's call site, and keeps every one of them from
the program: none is shown, logged, recorded by the program's own `catch_warnings`, or raised by
an "error" filter set before the window.

What the probes synchronise themselves is not counted: a warning raised while one of this
package's functions is on the stack (other than the pass-through wrappers in patches.py, which
only call the program's function) is dropped uncounted.

Not armed: off CUDA, when the program chose a sync debug mode of its own (its warnings and
errors stay its own), or when torch has no such mode. Then the step records have no `syncs`.
"""

import os
import re
import sys
import warnings

from ..state import HEAVY_STEPS, probe
from ..where import where

MESSAGE = "called a synchronizing CUDA operation"
FIRST, LAST = 2, HEAVY_STEPS  # steps whose intervals are counted
SITES = 5  # call sites kept per step, most frequent first

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_PATTERN = ".*" + re.escape(MESSAGE)  # our filter's message pattern
PASS_THROUGH = set()  # code objects of wrappers that only call the program's function


class _Window:
    armed = False
    count = 0
    sites = {}
    original = None  # warnings._showwarnmsg before ours


def _ours(frame):
    """Whether a frame of this package (not a pass-through wrapper) is on the stack."""
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith(_PACKAGE) and code not in PASS_THROUGH:
            return True
        frame = frame.f_back
    return False


def _show(msg):
    """Replaces `warnings._showwarnmsg`: a sync warning while armed is counted (or dropped when
    ours) and never shown; everything else goes on as before."""
    if _Window.armed and issubclass(msg.category, UserWarning) and MESSAGE in str(msg.message):
        try:
            if not _ours(sys._getframe(1)):
                _Window.count += 1
                site = where(2)
                _Window.sites[site] = _Window.sites.get(site, 0) + 1
        except Exception:
            pass
        return None
    return _Window.original(msg)


def _cuda(torch, device):
    return (device is not None and device.startswith("cuda")
            and hasattr(torch.cuda, "set_sync_debug_mode") and torch.cuda.is_initialized())


def interval_started(step, device):
    """Optimizer 0's interval leading to `step` begins: arm for the window, disarm after it
    (disarming is not a probe that a failure could switch off)."""
    if FIRST <= step <= LAST:
        _arm_on_cuda(device)
    else:
        try:
            disarm()
        except Exception:
            pass


@probe("syncs")
def _arm_on_cuda(device):
    torch = sys.modules["torch"]
    if not _cuda(torch, device):
        disarm()
    elif _Window.armed or torch.cuda.get_sync_debug_mode() == 0:  # else the program's own mode
        _arm(torch)


def _arm(torch):
    _Window.count, _Window.sites = 0, {}
    if _Window.original is None:
        _Window.original = warnings._showwarnmsg
        warnings._showwarnmsg = _show
    # In front of any filter the program set, so "error" or "ignore" cannot catch ours.
    warnings.filterwarnings("always", message=_PATTERN, category=UserWarning)
    _set_mode(torch, "warn")
    _Window.armed = True


def _set_mode(torch, mode):
    """torch warns once that the mode is a prototype when it is turned on: ours to keep."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.cuda.set_sync_debug_mode(mode)


def disarm():
    """Mode back to off, our filter out; `_show` stays (it passes everything else on)."""
    if not _Window.armed:
        return
    _Window.armed = False
    torch = sys.modules.get("torch")
    if torch is not None:
        _set_mode(torch, 0)
    warnings.filters[:] = [f for f in warnings.filters
                           if not (f[0] == "always" and getattr(f[1], "pattern", None) == _PATTERN)]
    warnings._filters_mutated()


def take():
    """`(count, sites)` for the interval now ending, or `(None, None)` when it was not counted."""
    if not _Window.armed:
        return None, None
    sites = sorted(_Window.sites.items(), key=lambda kv: (-kv[1], kv[0] or ""))[:SITES]
    count = _Window.count
    _Window.count, _Window.sites = 0, {}
    return count, [{"where": w, "count": n} for w, n in sites]
