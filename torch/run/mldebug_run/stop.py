"""How a watched process ends, and its `end` record.

  steps      when its watched window ends (window.py: after MLDEBUG_RUN_STEPS steps of optimizer
             0, or one cycle of the program; in its step post-hook): open epochs
             and overlaps are written, then `end`; the program's stdout, stderr and logging
             handlers are flushed and the process exits with status 0 at once (`os._exit`: the
             program's own atexit handlers, which could upload or save for minutes, do not run)
  exit       the program ended by itself (an atexit handler of ours)
  exception  it ended with an unhandled exception (`sys.last_value`, which the interpreter sets
             before atexit runs): the last TRACEBACK_LINES lines of its traceback
  signal     it ended with KeyboardInterrupt (SIGINT); a process killed by another signal
             writes no `end` (no handler is installed for SIGTERM: a Python handler runs only
             between bytecodes and would delay a kill while the program waits in native code)

Only a process whose trace is open writes an `end`. What it never does: print, or exit with a
status other than 0 itself.
"""

import atexit
import os
import sys
import traceback

from . import state as _state

TRACEBACK_LINES = 20


def _tail(exc):
    lines = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).splitlines()
    return "\n".join(lines[-TRACEBACK_LINES:])


def finish(reason, exception=None, window=None):
    st = _state.STATE
    if st is None or st.ended:
        return
    st.ended = True
    if not st.writer.is_open:
        return
    from .probes import data, manual, overlap

    manual.boundary()  # a hand-written update after the last backward: its step ends here
    data.finish_all()
    if reason in ("steps", "exit"):
        overlap.write_records()
    st.emit("end", step=st.step, reason=reason, steps=st.steps, exception=exception,
            probe_errors=list(st.probe_errors), time=st.now(), window=window,
            in_step=st.in_step is not None, **st.window.end_fields(), **st.totals)
    if reason == "steps":
        _flush_program_output()
        os._exit(0)


def _flush_program_output():
    logging = sys.modules.get("logging")
    if logging is not None:
        for ref in list(getattr(logging, "_handlerList", [])):
            handler = ref() if callable(ref) else None
            try:
                if handler is not None:
                    handler.flush()
            except Exception:
                pass
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            pass


def _at_exit():
    st = _state.STATE
    if st is None or st.ended or st.pid != os.getpid():
        return
    exc = getattr(sys, "last_value", None)
    try:
        if exc is None:
            finish("exit")
        elif isinstance(exc, KeyboardInterrupt):
            finish("signal", _tail(exc))
        else:
            finish("exception", _tail(exc))
    except Exception as err:  # the program is ending: report, never raise from atexit
        st.fail("end", err)


def install():
    atexit.register(_at_exit)
