"""BatchNorm running statistics for the comparison across ranks: one `batchnorm` record per
root model with BatchNorm modules, after each of optimizer 0's heavy steps, in a distributed
run (unless `MLDEBUG_RUN_RANKS=0`). Per module (at most MODULES_MAX, in model order): the
float64 sums of `running_mean` and `running_var`. Plain BatchNorm under DistributedDataParallel
normalises each rank's batch by its own statistics and updates its own running statistics, so
the sums differ across ranks; SyncBatchNorm computes them over all ranks, so they agree.

What it never does: change a buffer, a module mode or the statistics, call a collective, or run
on light steps or in a process that is not one of several ranks.
"""

import sys

from .. import state as _state
from ..state import probe
from ..world import distributed
from .data import RANKS
from .tensors import sums64, to_floats

MODULES_MAX = 64  # a record stays a few kB even for a deep ResNet


@probe("batchnorm")
def write_records(step):
    if not RANKS or not distributed():
        return
    st = _state.STATE
    torch = sys.modules["torch"]
    base = torch.nn.modules.batchnorm._BatchNorm
    for entry in st.model_list:
        inner = entry.inner()
        if inner is None:
            continue
        found = [(name, m) for name, m in inner.named_modules()
                 if isinstance(m, base) and m.running_mean is not None
                 and m.running_var is not None]
        if not found:
            continue
        kept = found[:MODULES_MAX]
        with torch.no_grad():
            values = to_floats(sums64([t for _, m in kept
                                       for t in (m.running_mean, m.running_var)]))
        modules = [{"name": name, "class": type(m).__name__, "training": bool(m.training),
                    "mean_sum": values[2 * i], "var_sum": values[2 * i + 1]}
                   for i, (name, m) in enumerate(kept)]
        st.emit("batchnorm", step=step, model=entry.index, modules=modules, count=len(found))
