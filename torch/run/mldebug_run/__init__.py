"""The Python side of `mldebug run`: probes that watch an unmodified PyTorch training program
from inside and write what they measure as a JSON-lines trace (the contract: TRACE.md beside
this package). The bootstrap `sitecustomize.py` calls `install()` once torch has been imported.

Modules: `trace` writes the file, `state` remembers between hooks, `where` finds the user's
line, `models` tells root modules apart, `stack` the modules being run per thread, `hooks`
holds the global module/optimizer hooks and the backward wrapper, `patches` the few function wrappers, `stop` the end of the process, and
`probes/` one module per measurement.

What it never does: decide whether anything is wrong (that is the judge's work), draw from a
random number generator, or change what the program computes or prints.
"""

import os
import sys

from . import state as _state


def _after_fork_in_child():
    st = _state.STATE
    if st is None:
        return
    try:
        st.after_fork()
        st.writer.after_fork()
        from . import stack

        stack.reset_thread()
    except Exception:
        pass


def install(watch):
    """Install every hook and wrapper; idempotent; a no-op without MLDEBUG_RUN_DIR. `watch`
    is the bootstrap's `watch(name, ready)`: run `ready` once a package has been imported."""
    run_dir = os.environ.get("MLDEBUG_RUN_DIR")
    if _state.STATE is not None or not run_dir:
        return
    torch = sys.modules["torch"]
    _state.STATE = _state.State(run_dir)
    from . import hooks, patches, stop

    hooks.install_hooks(torch)
    patches.install_patches(torch)
    from .probes import adapters

    adapters.install(watch)
    stop.install()
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)
    _debug("probes installed (torch %s; steps to watch: %s)"
           % (getattr(torch, "__version__", "?"), os.environ.get("MLDEBUG_RUN_STEPS", "?")))


def _debug(message):
    """One line of what start-up decided, with MLDEBUG_RUN_DEBUG set (as sitecustomize's)."""
    if os.environ.get("MLDEBUG_RUN_DEBUG", "0") in ("", "0"):
        return
    try:
        sys.stderr.write("mldebug run debug: pid %d: %s\n" % (os.getpid(), message))
        sys.stderr.flush()
    except Exception:
        pass


def debug_summary():
    """For MLDEBUG_RUN_DEBUG at exit: whether this process wrote a trace, and why not."""
    from .trace import in_dataloader_worker

    st = _state.STATE
    if st is None:
        return "the probes were not installed"
    writer = st.writer
    if writer.path is not None and writer.pid == os.getpid():
        return "trace written to %s" % writer.path
    if in_dataloader_worker():
        return "a DataLoader worker: no trace of its own (its batches are seen by the trainer)"
    return ("no trace: this process built no model that ran forward and no optimizer "
            "(a launcher or a helper writes none)")
