"""mldebug's PyTorch measurement driver: runs the checks on a PyTorch model and prints numbers.

The `mldebug` binary embeds this package and runs it with the user's own Python, nothing
written to disk: `python -c "<bootstrap.py>"` (beside this package) reads the package's sources
from the first line of stdin, imports them from memory under the name `mldebug_driver`, and
calls `main.main()`, which reads the request (the rest of stdin, one JSON object). From a
checkout the same runs as

    echo '{"contract": 2, "nonce": "n1", "target": {"kind": "file", "path": "/abs/model.py", "name": "Net"},
           "checks": ["init-loss"], "seed": 0, "steps": 200, "learning_rate": 0.003,
           "device": "cpu"}' | PYTHONPATH=torch/driver python -m mldebug_driver

It prints JSON lines on stdout and nothing else:

    {"event": "started", "python": "3.11.7", "nonce": "n1"}
    {"event": "hello", "contract": 2, "python": "3.11.7", "torch": "2.15.0", ..., "nonce": "n1"}
    {"event": "check", "check": "init-loss", "measurement": {"samples": [...]}, "nonce": "n1"}
    {"event": "done", "nonce": "n1"}

What it is for: MEASURING (losses, gradient norms, frames of abs-min/abs-max/non-finite counts,
output changes, memory levels). What it is not for: judging. Every threshold, status and
sentence is decided in Rust (crate `judge`), the same code that judges candle models. The
request, the events, every measurement's fields and the model protocol are in
torch/CONTRACT.md.

Modules: `main` (stdout, the `started` event, `import torch`, fatal errors), `events` (the
JSON-lines channel), `errors` (DriverError, tracebacks of the user's code), `request` (the
request parsed, its device and target), `run` (start-up, hello, one check at a time with every
RNG and shared model put back), `subjects` (FILE.py:NAME and hf: targets behind one protocol),
`lora` (peft wrapping), `tensors` (model outputs, inputs, the default loss), `rng` (seeds, RNG
states, determinism), `frames` (nan-trace's frame recorder) and `checks/`, one module per check.
Every module is named under this package, never at the top level, so a user's own `checks.py`
or `events.py` beside the model file imports as the user's.

Needs only the standard library and torch (Python >= 3.9). transformers is imported only for
`hf:` targets, peft only for `--lora`, numpy only if the user's code already imported it.
Importable without running anything (the tests and the benchmark import `run` and `frames`).
"""

import os
import time

# Start-up time is counted from here (before `import torch`).
START = time.perf_counter()

# Kineto (the profiler the memory check uses on CPU) logs its start and stop to stderr otherwise.
os.environ.setdefault("KINETO_LOG_LEVEL", "5")
