"""Runs a training script under the `mldebug run` bootstrap, the way the binary does (this
folder's parent first on PYTHONPATH, MLDEBUG_RUN_DIR, MLDEBUG_RUN_STEPS, MLDEBUG_RUN_CONTRACT),
and reads back every trace it wrote. The tests assert on the numbers in the traces.

The interpreter is the one running the tests (it must have torch: `.ci/torch-venv` prints it).

Two ways to start the program, one result:
  spawn  a new interpreter (`python [flags] script args`), exactly as a user's command starts;
         for the tests of the start itself (the bootstrap, flags, PYTHONPATH, launchers).
  run    the same, except that a plain `script args` with nothing else asked of the process
         runs in a fork of this test process, which has imported torch once (see `_fork`):
         each script then costs its own work instead of another `import torch` (about 4 s of
         CPU with the import torch's optimizers trigger). The child starts where a new
         interpreter would (argv, sys.path, cwd, environment, the bootstrap's sitecustomize)
         and ends as one does (exit status, unhandled exception, atexit), so the trace is the
         same: `test_bootstrap` compares a forked run with a spawned one.
"""

import atexit
import collections
import importlib.util
import json
import os
import re
import runpy
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

RUN = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # torch/run
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
TIMEOUT_S = 600  # a cold torch import on a busy 2-core machine takes 10 s; torchrun far more

Result = collections.namedtuple("Result", "rc stdout stderr traces dir")


def has(module):
    return importlib.util.find_spec(module) is not None


def fixture(name):
    return os.path.join(FIXTURES, name)


# What a fork starts from: imported by this process before its first fork. torch._dynamo is
# imported by torch's own optimizers on their first parameter group.
WARM = ("torch", "torch._dynamo")


def run(argv, steps=0, bootstrap=True, env=None, flags=(), cwd=None, pythonpath=()):
    """`spawn`'s result; in a fork of this process when the command is a script and its
    arguments, with no interpreter flags, environment or PYTHONPATH of its own."""
    if (hasattr(os, "fork") and not flags and not env and not pythonpath
            and argv[0].endswith(".py")):
        out, trace_dir = _scratch()
        rc, stdout, stderr = _fork(argv, steps if bootstrap else None, cwd or out, trace_dir, out)
        return Result(rc, stdout, stderr.decode(errors="replace"), read_traces(trace_dir), out)
    return spawn(argv, steps, bootstrap, env, flags, cwd, pythonpath)


_SCRATCH = []  # folders this process made, removed when it exits (not by a forked child)


def _scratch():
    out = tempfile.mkdtemp(prefix="mldebug-run-test-")
    trace_dir = os.path.join(out, "traces")
    os.mkdir(trace_dir)
    if not _SCRATCH:
        atexit.register(_remove_scratch, os.getpid())
    _SCRATCH.append(out)
    return out, trace_dir


def _remove_scratch(owner):
    if os.getpid() == owner:
        for folder in _SCRATCH:
            shutil.rmtree(folder, ignore_errors=True)



def contract_version():
    """The trace contract version, read from its one definition (`TRACE_VERSION` in
    crates/doctor/src/trace/records.rs), as the binary hands it to the probes."""
    records = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                           "crates", "doctor", "src", "trace", "records.rs")
    with open(records) as f:
        return re.search(r"pub const TRACE_VERSION: u32 = (\d+);", f.read()).group(1)

def _bootstrap_environ(environ, trace_dir, steps):
    """`environ` without what a run inherits from ours, then, unless `steps` is None, with
    what the binary hands the bootstrap (the caller adds the bootstrap to PYTHONPATH)."""
    for key in ("MLDEBUG_RUN_DIR", "MLDEBUG_RUN_STEPS", "MLDEBUG_RUN_CONTRACT", "PYTHONPATH"):
        environ.pop(key, None)
    if steps is not None:
        environ.update(MLDEBUG_RUN_DIR=trace_dir, MLDEBUG_RUN_STEPS=str(steps),
                       MLDEBUG_RUN_CONTRACT=contract_version())


def spawn(argv, steps=0, bootstrap=True, env=None, flags=(), cwd=None, pythonpath=()):
    """Run `python [flags] argv...` in a new interpreter (argv[0] a script path, or `-m`, or a
    list starting with a program when argv[0] is not a .py file); returns a Result with the
    traces by pid."""
    out, trace_dir = _scratch()
    environ = dict(os.environ)
    _bootstrap_environ(environ, trace_dir, steps if bootstrap else None)
    paths = list(pythonpath)
    if bootstrap:
        paths.insert(0, RUN)
    if paths:
        environ["PYTHONPATH"] = os.pathsep.join(paths)
    environ.setdefault("OMP_NUM_THREADS", "1")
    environ.update(env or {})
    command = list(argv) if argv[0].endswith(("torchrun",)) else [sys.executable, *flags, *argv]
    proc = subprocess.run(command, capture_output=True, env=environ, cwd=cwd or out,
                          timeout=TIMEOUT_S)
    return Result(proc.returncode, proc.stdout, proc.stderr.decode(errors="replace"),
                  read_traces(trace_dir), out)


def _fork(argv, steps, cwd, trace_dir, out):
    """(exit status, stdout bytes, stderr bytes) of `python argv...` run in a fork of this
    process; `steps` None runs it without the bootstrap."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # as for a spawned program, before torch loads
    for module in WARM:
        importlib.import_module(module)
    paths = [os.path.join(out, name) for name in ("stdout", "stderr")]
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the tests
        status = 70
        try:
            for fd, path in zip((1, 2), paths):
                os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
            status = _as_main(argv, steps, cwd, trace_dir)
        except BaseException:  # a fault of this function, not of the program
            traceback.print_exc()
        finally:
            os._exit(status)
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        done, wait_status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise subprocess.TimeoutExpired(argv, TIMEOUT_S)
        time.sleep(0.02)
    captured = []
    for path in paths:
        with open(path, "rb") as f:
            captured.append(f.read())
    return os.waitstatus_to_exitcode(wait_status), captured[0], captured[1]


def _as_main(argv, steps, cwd, trace_dir):
    """In the forked child: what `python script args` does from start-up to exit, as far as a
    program or the bootstrap can tell. Returns the exit status."""
    script = os.path.abspath(os.path.join(cwd, argv[0]))
    os.chdir(cwd)
    _bootstrap_environ(os.environ, trace_dir, steps)
    sys.argv = [script, *argv[1:]]
    # A new interpreter's path: the script's folder, then PYTHONPATH, then the rest.
    rest = [p for p in sys.path[1:] if os.path.realpath(p or ".") != os.path.realpath(RUN)]
    sys.path[:] = [os.path.dirname(script)] + ([RUN] if steps is not None else []) + rest
    if steps is not None:
        os.environ["PYTHONPATH"] = RUN
        spec = importlib.util.spec_from_file_location(
            "sitecustomize", os.path.join(RUN, "sitecustomize.py"))
        site = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = site
        spec.loader.exec_module(site)
    try:
        runpy.run_path(script, run_name="__main__")
        status = 0
    except SystemExit as stop:
        status = _exit_status(stop.code)
    except BaseException as exc:  # the interpreter's own handling of an uncaught exception
        # Its traceback starts at the script, as a new interpreter's does (not in runpy).
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != script:
            tb = tb.tb_next
        exc = exc.with_traceback(tb or exc.__traceback__)
        sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, exc.__traceback__
        sys.excepthook(type(exc), exc, exc.__traceback__)
        status = 1
    # The interpreter's shutdown: wait for the program's threads, run atexit, flush.
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    return status


def _exit_status(code):
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


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
