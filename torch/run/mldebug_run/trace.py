"""The trace writer: one JSON-lines file per process, `trace-<pid>.jsonl` in `MLDEBUG_RUN_DIR`.

The file is created lazily, the first time a record arrives after the process has built a
model or an optimizer (`open_file`); until then records wait in a bounded buffer, so a launcher
(`torchrun`, `accelerate launch`) or a data-only helper writes no file. A DataLoader worker
process never opens one. Each record is one `os.write` of one line on an `O_APPEND` descriptor:
nothing sits in a Python buffer when the process ends with `os._exit`, but for the short `step`
records of steps the cadence leaves unmeasured (cadence.py): those are held (at most HELD_MAX)
and written in one `os.write` before the next record of any other kind or the next measured
step, at the verdict checkpoint and at the end. Non-finite floats are written as the strings
"NaN", "inf", "-inf".

It never writes to the program's stdout or stderr and never raises into the program.
"""

import json
import math
import os
import sys
import threading

# Records kept while no file is open yet (a loader drawn before the first forward); a process
# that never builds a model drops them, so the buffer must not grow with a long data-only run.
PENDING_RECORDS_MAX = 2000
HELD_MAX = 64  # short step records held for one write: the cadence's largest stride


def _contract_version():
    """The contract version `mldebug run` hands over in MLDEBUG_RUN_CONTRACT (its one
    definition is `TRACE_VERSION` in crates/doctor/src/trace/records.rs); 0, which no reader
    takes, when it is missing or not a number."""
    try:
        return int(os.environ.get("MLDEBUG_RUN_CONTRACT", "0"))
    except ValueError:
        return 0


TRACE_VERSION = _contract_version()


def _plain(value):
    """json's `default`: numbers of other libraries as Python numbers, anything else as text."""
    for probe, cast in (("__index__", int), ("__float__", float)):
        if hasattr(value, probe):
            try:
                return cast(value)
            except (TypeError, ValueError):
                pass
    return str(value)


def _finite_or_text(value):
    if isinstance(value, dict):
        return {k: _finite_or_text(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_text(v) for v in value]
    if not isinstance(value, (str, int, float, type(None))):
        value = _plain(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


# One encoder for every record (json.dumps with options builds a new one per call).
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False, default=_plain)


def encode(record):
    try:
        text = _ENCODER.encode(record)
    except ValueError:
        text = _ENCODER.encode(_finite_or_text(record))
    return text + "\n"


def in_dataloader_worker():
    data = sys.modules.get("torch.utils.data")
    get = getattr(data, "get_worker_info", None)
    try:
        return get is not None and get() is not None
    except Exception:
        return False


class TraceWriter:
    def __init__(self, directory):
        self.directory = directory
        self.fd = None
        self.pid = os.getpid()
        self.pending = []
        self.held = []  # records of unmeasured steps waiting for one write
        self.lock = threading.Lock()
        self.path = None

    def after_fork(self):
        """In a forked child: forget the parent's file (the child gets its own if it trains)."""
        self.fd = None
        self.pid = os.getpid()
        self.pending = []
        self.held = []
        self.lock = threading.Lock()

    @property
    def is_open(self):
        return self.fd is not None and self.pid == os.getpid()

    def open_file(self, start_record):
        """Create this process's trace with `start_record` first, then the buffered records.
        Returns whether the file is open."""
        if self.is_open:
            return True
        if self.pid != os.getpid() or in_dataloader_worker():
            return False
        path = os.path.join(self.directory, "trace-%d.jsonl" % os.getpid())
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        self.fd = os.open(path, flags, 0o644)
        self.path = path
        from . import _debug  # the package's, loaded by now

        _debug("trace opened: %s" % path)
        pending, self.pending = self.pending, []
        self._write_line(encode(start_record))
        for line in pending:
            self._write_line(line)
        return True

    def write(self, record, hold=False):
        """Write a record's line; with `hold`, keep the record (its values final: numbers and
        text) and write it with the next write (see above)."""
        if hold and self.fd is not None:
            self.held.append(record)
            if len(self.held) >= HELD_MAX:
                self.release()
            return
        if self.pid != os.getpid():
            return
        line = encode(record)
        if self.fd is None:
            if len(self.pending) < PENDING_RECORDS_MAX:
                self.pending.append(line)
            return
        if self.held:
            line = self._held_lines() + line
        self._write_line(line)

    def _held_lines(self):
        held, self.held = self.held, []
        return "".join(encode(r) for r in held)

    def release(self):
        """Write the held records now."""
        if self.held and self.fd is not None and self.pid == os.getpid():
            self._write_line(self._held_lines())

    def _write_line(self, line):
        data = line.encode("utf-8")
        with self.lock:
            while data:
                written = os.write(self.fd, data)
                data = data[written:]
