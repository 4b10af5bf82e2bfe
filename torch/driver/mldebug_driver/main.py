"""The driver's entry: stdout kept for the JSON lines alone, the request read from stdin, the
`started` event (before `import torch`, so the CLI tells a Python without torch from a program
that is not Python), then the run; a start-up problem is its `fatal` event and exit code."""

import os
import sys

from .errors import DriverError, first_line
from .events import Events, request_nonce


def import_torch():
    """Imports torch; the error's first line when it cannot be imported."""
    try:
        import torch  # noqa: F401
        import torch.nn.functional  # noqa: F401
    except Exception as e:  # ImportError, or OSError for a CUDA build without its libraries
        return "%s: %s" % (type(e).__name__, first_line(e))
    return None


def main():
    # stdout carries only our JSON lines: fd 1 (and sys.stdout) go to stderr for everything
    # else, the user's prints and C libraries' included; we write to a duplicate of the old fd 1
    # (not inherited by the processes the user's code starts).
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    text = sys.stdin.read()
    events = Events(out, request_nonce(text))
    # Before torch: the CLI tells a Python that cannot import torch from a program that is not
    # a Python at all (which never says this).
    events.emit({"event": "started", "python": "%d.%d.%d" % sys.version_info[:3]})
    try:
        error = import_torch()
        if error is not None:
            raise DriverError(
                "`import torch` failed in %s (%s); install PyTorch there" % (sys.executable, error),
                "no_torch",
            )
        # The modules that need torch, imported once it is there.
        from .request import parse_request
        from .run import run_all

        request = parse_request(text)
        run_all(request, events)
    except DriverError as e:
        sys.stderr.write("mldebug torch driver: %s\n" % e)
        events.emit(
            {"event": "fatal", "kind": e.kind, "message": str(e), "traceback": e.traceback}
        )
        sys.exit(e.code)
    out.flush()
