"""Memory at each step: the process's resident set from /proc/self/statm (one descriptor kept
open per process), and on CUDA the allocator's counters (`memory_allocated`,
`max_memory_allocated`, `memory_reserved`); at a stage boundary of a heavy step
(probes/stages.py) also the peak resident set (getrusage).

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


_statm = [None, None]  # (pid, descriptor) of /proc/self/statm: opened once per process


def _statm_fd(reopen=False):
    pid = os.getpid()
    if _statm[0] != pid or reopen:  # first use, a forked child (the parent's file describes
        # the parent), or a descriptor the program closed
        fd = os.open("/proc/self/statm", os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        _statm[:] = [pid, fd]
    return _statm[1]


def _statm_pages():
    try:
        return int(os.pread(_statm_fd(), 256, 0).split()[1])
    except OSError:
        return int(os.pread(_statm_fd(reopen=True), 256, 0).split()[1])


def rss_bytes():
    try:
        # pread on a descriptor kept open: a step costs one system call, not three.
        return _statm_pages() * _PAGE
    except (OSError, ValueError, IndexError, AttributeError):
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
