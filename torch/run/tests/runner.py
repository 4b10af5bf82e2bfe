"""Runs a training script under the `mldebug run` bootstrap, the way the binary does (this
folder's parent first on PYTHONPATH, MLDEBUG_RUN_DIR, MLDEBUG_RUN_STEPS, MLDEBUG_RUN_CONTRACT),
and reads back every trace it wrote. The tests assert on the numbers in the traces.

The interpreter is the one running the tests (it must have torch: `.ci/torch-venv` prints it).
"""

import collections
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

RUN = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # torch/run
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
TIMEOUT_S = 600  # a cold torch import on a busy 2-core machine takes 10 s; torchrun far more

Result = collections.namedtuple("Result", "rc stdout stderr traces dir")


def has(module):
    return importlib.util.find_spec(module) is not None


def fixture(name):
    return os.path.join(FIXTURES, name)


def run(argv, steps=0, bootstrap=True, env=None, flags=(), cwd=None, pythonpath=()):
    """Run `python [flags] argv...` (argv[0] a script path, or `-m`, or a list starting with
    a program when argv[0] is not a .py file); returns a Result with the traces by pid."""
    out = tempfile.mkdtemp(prefix="mldebug-run-test-")
    trace_dir = os.path.join(out, "traces")
    os.mkdir(trace_dir)
    environ = dict(os.environ)
    for key in ("MLDEBUG_RUN_DIR", "MLDEBUG_RUN_STEPS", "MLDEBUG_RUN_CONTRACT", "PYTHONPATH"):
        environ.pop(key, None)
    paths = list(pythonpath)
    if bootstrap:
        paths.insert(0, RUN)
        environ.update(MLDEBUG_RUN_DIR=trace_dir, MLDEBUG_RUN_STEPS=str(steps),
                       MLDEBUG_RUN_CONTRACT="1")
    if paths:
        environ["PYTHONPATH"] = os.pathsep.join(paths)
    environ.setdefault("OMP_NUM_THREADS", "1")
    environ.update(env or {})
    command = list(argv) if argv[0].endswith(("torchrun",)) else [sys.executable, *flags, *argv]
    proc = subprocess.run(command, capture_output=True, env=environ, cwd=cwd or out,
                          timeout=TIMEOUT_S)
    return Result(proc.returncode, proc.stdout, proc.stderr.decode(errors="replace"),
                  read_traces(trace_dir), out)


def read_traces(trace_dir):
    traces = {}
    for name in sorted(os.listdir(trace_dir)):
        if name.startswith("trace-") and name.endswith(".jsonl"):
            with open(os.path.join(trace_dir, name)) as f:
                traces[int(name[6:-6])] = [json.loads(line) for line in f]
    return traces


def only_trace(result):
    """The records of the single trace a one-process run must have written."""
    assert len(result.traces) == 1, "%d traces; stderr:\n%s" % (len(result.traces), result.stderr)
    return next(iter(result.traces.values()))


def kind(records, name):
    return [r for r in records if r["kind"] == name]


def steps(records, optimizer=0):
    return [r for r in records if r["kind"] == "step" and r["optimizer"] == optimizer]
