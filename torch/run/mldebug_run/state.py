"""What the probes remember about this process between hook calls, in one `State` object
(`STATE`, created by `install`), and the guard every probe runs under.

It holds counters, weak references and small summaries; it never holds a strong reference to
a model, an optimizer, a gradient or a batch beyond the hook call that uses it (a gradient kept
alive would change the program's memory), except the last loss scalar and the integer input of
the last forward, both detached and small, and, on the heavy steps of an update written by
hand, its gradients from the backward to the next forward (probes/manual.py).

`probe(name)` wraps a probe so that an exception switches that probe off, is reported once
(in `end.probe_errors`, which the report shows) and never reaches the program: nothing is
written to the program's stdout or stderr.
"""

import functools
import os
import sys
import time

from .cadence import Cadence
from .trace import TRACE_VERSION, TraceWriter
from .window import Window

HEAVY_STEPS = 3  # steps with copies, per-module statistics and row fingerprints (TRACE.md)
# loss_call and labels records per step, each: a per-token loss loop must not flood the trace,
# and an evaluation loop (gradients off) before the first step must not use up the budget.
RECORDS_PER_STEP = {True: 8, False: 2}  # by torch.is_grad_enabled()


class Interval:
    """What happened since the previous `step` record."""

    def __init__(self, start):
        self.start = start
        self.forwards = 0
        self.nograd_forwards = 0
        self.backwards = 0
        self.loss = None
        self.training = None
        self.data_wait = 0.0
        self.batch = None  # a running blake2b over the training forwards' inputs
        self.budget = {}  # (record kind, grad enabled) -> records written in this interval
        self.stages = None  # point -> memory at a stage boundary, heavy steps (probes/stages.py)
        self.input = None  # the first training forward's input, heavy steps (probes/stages.py)
        self.loss_ref = None  # (weakref to the last backward's loss, graph retained) (losses.py)
        self.reduction = None  # how that loss reduces, heavy steps (probes/losses.py)
        self.measure_s = 0.0  # seconds the probes spent measuring tensors (cadence.py)


class ModelEntry:
    def __init__(self, index, ref, inner, shifts_labels):
        self.index = index
        self.ref = ref
        self.inner = inner  # weakref to the wrapped module (DDP/FSDP) or to the root itself
        self.shifts_labels = shifts_labels
        self.names = None  # id(submodule or parameter) -> dotted name, built on first need
        self.eval_training_forward = False  # a grad-enabled forward in eval mode, no backward yet
        self.takes_labels = False


class OptimizerEntry:
    def __init__(self, ref, where):
        self.ref = ref
        self.where = where
        self.index = None  # set at its first step, in the order optimizers first step
        self.steps = 0
        self.after_step = None  # [(weakref(grad) | None, version)] as the last step left them
        self.pending = False  # waiting for the first backward that reaches its gradients
        self.before = "unknown"  # grads_before_backward for its next step
        self.carried = None
        self.pre = None  # per-tensor state just before the backward being watched
        self.heavy = None  # what the step pre-hook measured for the post-hook
        self.counted = None  # ...or {"closure": bool} for a step the cadence leaves unmeasured
        self.reset = None  # probes/carried.py: per tensor, how its gradient was reset
        self.unresolved = False  # ...and whether a tensor is still to be looked at
        self.manual = False  # a hand-written update measured between backward and forward
        self.losses = None  # weakrefs to the losses of its last steps (probes/losses.py)


def _int_env(name, default):
    try:
        return max(0, int(os.environ.get(name, default)))
    except ValueError:
        return default


class State:
    def __init__(self, run_dir):
        self.t0 = time.monotonic()
        self.writer = TraceWriter(run_dir)
        self.limit = _int_env("MLDEBUG_RUN_STEPS", 0)  # the steps, or a cycle window's cap
        self.window = Window()  # how the watched window ends (window.py)
        self.cadence = Cadence(HEAVY_STEPS)  # which light steps are measured (cadence.py)
        self.steps = 0  # steps of optimizer 0: the process's step count
        self.models = {}  # id(root module) -> ModelEntry
        self.model_list = []
        self.not_models = {}  # id(module) -> weakref: roots without parameters (losses, transforms)
        self.optimizers = {}  # id(optimizer) -> OptimizerEntry, every optimizer constructed
        self.stepped = []  # OptimizerEntry in the order of their first step
        self.interval = Interval(None)
        self.first_forward = None
        self.in_backward = 0
        self.disabled = set()
        self.probe_errors = []
        self.ended = False
        self.reported = set()  # (event, key) of mode and nonfinite records written
        self.check_forward = False  # armed by a non-finite loss: check every module's output
        self.int_input = None  # (ModelEntry, detached integer tensor) of the last root forward
        self.labels_candidate = None  # a `labels` record from a loss inside a root forward
        self.root_kwargs_labels = False
        self.scaled = {}  # id(scaled loss) -> (weakref, scale tensor) from GradScaler.scale
        self.clips = []  # gradient clips waiting for their step (probes/clip.py)
        self.pid = os.getpid()
        # over the run; grads_taken: torch.autograd.grad calls that were no update's backward
        # (torch.func's transforms, MAML's inner steps, gradients of inputs); raw_backwards:
        # backwards over leaf tensors of no module while no model or optimizer exists
        self.totals = {"forwards": 0, "nograd_forwards": 0, "backwards": 0, "grads_taken": 0,
                       "raw_backwards": 0}
        self.manual = None  # probes/manual.py: the hand-written update's entry, once measured
        self.raw = None  # probes/manual.py: leaf tensors of no module a backward reached
        self.counted = None  # an optimizer that stepped after hand-written steps: it counts now
        self.in_step = None  # the optimizer whose step is under way (between its two hooks)

    # --- steps -----------------------------------------------------------------------------
    @property
    def step(self):
        """The step a record made now belongs to (the one it leads to)."""
        return self.steps + 1

    @property
    def heavy(self):
        return self.steps < HEAVY_STEPS

    @property
    def measuring(self):
        """Whether the step a record made now leads to is measured (cadence.py)."""
        return self.cadence.measuring(self.steps + 1)

    def now(self):
        return time.monotonic() - self.t0

    # --- the trace -------------------------------------------------------------------------
    def open_trace(self, device):
        if self.writer.is_open:
            return True
        return self.writer.open_file(self._start_record(device))

    def _start_record(self, device):
        torch = sys.modules.get("torch")
        transformers = sys.modules.get("transformers")

        def env_int(name):
            try:
                return int(os.environ[name])
            except (KeyError, ValueError):
                return None

        return {
            "kind": "start", "trace": TRACE_VERSION, "pid": os.getpid(), "ppid": os.getppid(),
            "rank": env_int("RANK"), "world_size": env_int("WORLD_SIZE"),
            "local_rank": env_int("LOCAL_RANK"), "argv": list(sys.argv),
            "python": "%d.%d.%d" % sys.version_info[:3],
            "torch": getattr(torch, "__version__", None),
            "transformers": getattr(transformers, "__version__", None),
            "device": device, "steps_limit": self.limit, "heavy_steps": HEAVY_STEPS,
            "window": self.window.start_fields(self.limit),
        }

    def within_budget(self, kind, grad_enabled):
        """Count one `kind` record in this interval; False once RECORDS_PER_STEP are written."""
        key = (kind, bool(grad_enabled))
        used = self.interval.budget.get(key, 0)
        if used >= RECORDS_PER_STEP[bool(grad_enabled)]:
            return False
        self.interval.budget[key] = used + 1
        return True

    def emit(self, kind, **fields):
        record = {"kind": kind}
        record.update(fields)
        self.writer.write(record)

    def emit_held(self, record):
        """A finished record (its `kind` in it) held for the next write (trace.py)."""
        self.writer.write(record, hold=True)

    # --- probe failures --------------------------------------------------------------------
    def fail(self, name, err):
        if name in self.disabled:
            return
        self.disabled.add(name)
        text = "%s: %s: %s" % (name, type(err).__name__, err)
        self.probe_errors.append(text)

    def after_fork(self):
        """A forked child starts a trace of its own (if it trains): no inherited counters."""
        run_dir = self.writer.directory
        limit = self.limit
        self.__init__(run_dir)
        self.limit = limit


STATE = None


def compiling_check():
    """torch.compiler.is_compiling (constant True while torch.compile traces), or False."""
    compiler = getattr(sys.modules.get("torch"), "compiler", None)
    return getattr(compiler, "is_compiling", None) or (lambda: False)


def probe(name):
    """Run the decorated probe unless it failed before; an exception switches it off."""

    def decorate(fn):
        @functools.wraps(fn)
        def guarded(*args, **kwargs):
            if STATE is None or name in STATE.disabled:
                return None
            try:
                return fn(*args, **kwargs)
            except Exception as err:
                STATE.fail(name, err)
                return None

        return guarded

    return decorate
