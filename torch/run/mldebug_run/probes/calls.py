"""The arguments of a wrapped call by name, as the wrapped function binds them (its signature
read once per function): read by the loss probes (labels.py) and the range checks (ranges.py).

What it never does: call the function or change an argument.
"""

import inspect

_signatures = {}


def bound_arguments(fn, args, kwargs):
    """`fn`'s parameters by name for this call, defaults filled in."""
    sig = _signatures.get(fn)
    if sig is None:
        sig = _signatures[fn] = inspect.signature(fn)
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.arguments
