"""The process among others: whether it is one of several ranks of torch.distributed, read by
the window (ranks agree on their last step) and by the probes whose records are compared across
ranks (data, batchnorm).

What it never does: import torch, initialise torch.distributed or call a collective; it reads
the modules the program imported.
"""

import sys


def distributed():
    """Whether torch.distributed is initialised with more than one rank."""
    dist = getattr(sys.modules.get("torch"), "distributed", None)
    try:
        return bool(dist is not None and dist.is_available() and dist.is_initialized()
                    and dist.get_world_size() > 1)
    except Exception:
        return False
