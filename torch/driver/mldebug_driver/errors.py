"""What goes wrong, and how it is told: a start-up problem is a DriverError (the `fatal` event
of its kind and that kind's exit code); an error of the user's code is told by the end of its
traceback, the driver's own frames left out. Standard library only: it works before torch is
imported."""

import os
import traceback

# What a start-up problem is (the `fatal` event's kind, CONTRACT.md), and the exit code each
# gives. The CLI reads the event, never the exit code: the user's code can exit with any code.
FATAL_EXIT = {
    "request": 2,  # the request itself is malformed
    "target": 3,  # the target cannot be loaded or does not follow the protocol
    "no_torch": 4,  # torch cannot be imported
    "user_code": 5,  # the user's code raised (or exited) while loading or building the model
}
# An error event carries at most this many traceback lines.
TRACEBACK_LINES = 12

# The driver's own frames: the bootstrap (`python -c`, "<string>"), this package imported from
# memory (compiled as "<mldebug_driver/...>") or from a checkout (files in this folder).
_PACKAGE = __name__.split(".")[0]
_MEMORY_PREFIX = "<%s/" % _PACKAGE
_FOLDER = os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else None
# torch's module-call wrappers, left out too.
_WRAPPER = os.path.join("torch", "nn", "modules", "module.py")


class DriverError(Exception):
    """A start-up problem: a `fatal` event of `kind` (a key of FATAL_EXIT), its message on
    stderr, and the exit code of its kind."""

    def __init__(self, message, kind="target", traceback_lines=()):
        super().__init__(message)
        assert kind in FATAL_EXIT, kind
        self.kind = kind
        self.code = FATAL_EXIT[kind]
        self.traceback = list(traceback_lines)


def first_line(e):
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def is_own_frame(filename):
    """Whether a traceback frame's file is the driver's own code."""
    if filename == "<string>" or filename.startswith(_MEMORY_PREFIX):
        return True
    return _FOLDER is not None and os.path.abspath(filename).startswith(_FOLDER + os.sep)


def user_traceback(e):
    """The traceback without the driver's own frames and torch's module-call wrappers: what is
    left points into the user's code (all frames when nothing is left)."""
    frames = traceback.extract_tb(e.__traceback__)
    kept = [
        f for f in frames if not is_own_frame(f.filename) and not f.filename.endswith(_WRAPPER)
    ]
    return traceback.format_list(kept or frames) + traceback.format_exception_only(type(e), e)


def traceback_tail(e):
    """The last TRACEBACK_LINES non-blank lines of `user_traceback(e)`."""
    lines = "".join(user_traceback(e)).splitlines()
    return [line for line in lines if line.strip()][-TRACEBACK_LINES:]


def user_code_error(what, e):
    """The DriverError for an exception (or a sys.exit) the user's code raised in `what` at
    start-up: an error of the user's code, with the end of its traceback."""
    if isinstance(e, SystemExit):
        text = "%s called sys.exit(%r)" % (what, e.code)
    else:
        text = "%s raised %s: %s" % (what, type(e).__name__, first_line(e))
    return DriverError(text, "user_code", traceback_tail(e))


def error_event(check, e):
    """The `check` event of a check the user's code broke: its first line and traceback."""
    return {
        "event": "check",
        "check": check,
        "error": {
            "message": "%s: %s" % (type(e).__name__, first_line(e)),
            "traceback": traceback_tail(e),
        },
    }
