"""The modules being run, per thread: the stack the global module hooks push and pop, the root
forward under way, and what the hooks note about it. The hooks write it; the probes read where
they are (`current_module`, `current_root`) from here, not from the hooks.
"""

import threading

TLS = threading.local()
# Threads whose stack is not empty (a module of theirs is being run): the global hooks are
# taken off for a light step's training forward only while no other thread runs a module.
BUSY = set()


def stack():
    """This thread's stack of modules being run, made on first use."""
    frames = getattr(TLS, "stack", None)
    if frames is None:
        frames = TLS.stack = []
        TLS.root = None
        TLS.root_grad = False
        TLS.batchnorm = {}
        TLS.input_wanted = False  # this root forward's input goes to the step record
        TLS.autocast = None  # autocast's dtype around it, or inside it at its first child
        TLS.device_type = None
        TLS.suspended = None  # (root, its hook) while the global hooks are off (hooks.py)
    return frames


def reset_thread():
    """In a forked child: a fresh stack (the parent's was mid-call)."""
    TLS.stack = None
    BUSY.clear()  # the parent's threads are not the child's
    stack()


def current_module():
    frames = stack()
    return frames[-1] if frames else None


def current_root():
    stack()
    return TLS.root
