"""The driver's output channel: JSON lines on stdout, one object per line, flushed at once, each
carrying the request's nonce (torch/CONTRACT.md). Standard library only: it works before torch
is imported."""

import json
import math

CONTRACT = 2


def jsonable(x):
    """`x` with every non-finite float written as the strings "NaN", "inf", "-inf"."""
    if isinstance(x, float):
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return x
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    return x


class Events:
    """The JSON-lines channel: one object per line, flushed at once, each carrying the request's
    nonce (a line without it is not the driver's)."""

    def __init__(self, stream, nonce=None):
        self.stream = stream
        self.nonce = nonce

    def emit(self, obj):
        obj = dict(obj, nonce=self.nonce)
        self.stream.write(json.dumps(jsonable(obj), allow_nan=False) + "\n")
        self.stream.flush()


def request_nonce(text):
    """The request's nonce (echoed on every event), or None when there is none to read."""
    try:
        nonce = json.loads(text).get("nonce")
    except (ValueError, AttributeError):
        return None
    return nonce if isinstance(nonce, str) else None
