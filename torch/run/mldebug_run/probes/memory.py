"""Memory at each step: the process's resident set from /proc/self/statm, and on CUDA the
allocator's counters (`memory_allocated`, `max_memory_allocated`, `memory_reserved`); at a
stage boundary of a heavy step (probes/stages.py) also the peak resident set (getrusage).

What it never does: reset the allocator's peak (`reset_peak_memory_stats` would change what the
program itself reads from `max_memory_allocated`, so `max_allocated` is the peak so far, not
per step), synchronise the device, or allocate anything on it.
"""

import os
import sys

from ..state import probe

try:
    _PAGE = os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):
    _PAGE = 4096


def rss_bytes():
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource  # stdlib; peak rather than current where /proc is missing

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024
    except Exception:
        return None


def rss_peak_bytes():
    """The process's peak resident set so far (getrusage), or None."""
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024
    except Exception:
        return None


@probe("memory")
def memory_record(device):
    """The `memory` object of a step record; `device` is the first model's device text."""
    record = {"device": device, "rss": rss_bytes(), "allocated": None, "max_allocated": None,
              "reserved": None}
    if device and device.startswith("cuda"):
        # One read of the allocator's statistics: memory_allocated, max_memory_allocated and
        # memory_reserved each build the whole nested dictionary (about 1 ms a step for three).
        stats = sys.modules["torch"].cuda.memory_stats(device)
        record["allocated"] = stats.get("allocated_bytes.all.current", 0)
        record["max_allocated"] = stats.get("allocated_bytes.all.peak", 0)
        record["reserved"] = stats.get("reserved_bytes.all.current", 0)
    return record


def snapshot(device):
    """A `memory_record` plus the peak resident set (`rss_peak`): one stage boundary."""
    record = memory_record(device) or {}
    record["rss_peak"] = rss_peak_bytes()
    return record
