"""The watched window of a process: how many optimizer steps it is watched for, and why it ends.

Two ways, by the environment the binary sets:

  fixed  MLDEBUG_RUN_STEPS=N (N > 0, no MLDEBUG_RUN_WINDOW): N steps, then the end (stop.py);
         0 is the whole run.
  cycle  MLDEBUG_RUN_WINDOW=cycle: one cycle of the program. The process is watched until it
         has run its first evaluation (after at least one step) and its training loader has
         started its second pass (a program with no training DataLoader: the evaluation
         alone), then ends at the next step, but never before the checkpoint step below (a
         cycle window watches at least what a fixed window of that many steps did); or at a
         cap, MLDEBUG_RUN_STEPS steps or MLDEBUG_RUN_SECONDS seconds after its first step,
         whichever comes first.

An evaluation is a root forward, after step 1, of a model that has trained (a forward with
gradients in training mode before): in eval mode (with or without gradients), or with gradients
off over a batch that is not the training loader's (another loader's, or no loader's). A metric
computed under `no_grad` on the training batch in training mode is not one.

The verdict checkpoint (MLDEBUG_RUN_VERDICT_STEP=S, cycle windows only): at step S the process
writes `checkpoint-<pid>` in the run folder and waits (at most VERDICT_WAIT_S) for the binary to
judge the first S steps and write `verdict`: `stop` when they hold a fail already (the process
ends there, as a fixed window of S steps would), `go` otherwise. The wait is taken out of the
next step's time.

Ranks (torch.distributed with more than one rank) must end at the same step, or one would wait
for the others forever: a rank whose cycle or time cap ends writes `stop` (JSON: the step, the
reason) in the run folder, at its own step + STOP_MARGIN, unless one is there, and every rank
reads it at each step and ends at that step. Ranks stay within a step of one another (each
step's gradients are reduced together), so every rank reads it before passing that step.

What it never does: a collective, a synchronisation, or anything to the program's data.
"""

import json
import os
import time

from . import world

VERDICT_WAIT_S = 10.0  # the most a process waits at the checkpoint for the binary's verdict
STOP_MARGIN = 3  # steps between a rank's decision and the step every rank ends at


def _float_env(name):
    try:
        return max(0.0, float(os.environ.get(name, "0")))
    except ValueError:
        return 0.0


class Window:
    def __init__(self):
        self.cycle = os.environ.get("MLDEBUG_RUN_WINDOW") == "cycle"
        self.seconds = _float_env("MLDEBUG_RUN_SECONDS") if self.cycle else 0.0
        verdict = int(_float_env("MLDEBUG_RUN_VERDICT_STEP")) if self.cycle else 0
        self.verdict_step = verdict
        self.first_step = None  # time of the first step's end
        self.first_evaluation = None  # the step an evaluation first led to
        self.second_epoch = None  # the step the training loader's second pass began in
        self.stop_at = None  # (step, reason) agreed by the ranks
        self.trained = set()  # models (window keys) that ran a training forward
        self.checkpoint = None  # "stop" | "go" | None (no answer) at the verdict checkpoint

    def start_fields(self, limit):
        if not self.cycle:
            return None
        return {"cycle": True, "steps": limit, "seconds": self.seconds,
                "verdict_step": self.verdict_step or None}

    def end_fields(self):
        return {"first_evaluation": self.first_evaluation, "second_epoch": self.second_epoch}


def _key(entry):
    """A model by its first parameter: a wrapper (DDP) and the module it wraps, run on its own
    for an evaluation, are one model."""
    key = getattr(entry, "window_key", None)
    if key is None:
        inner = entry.inner()
        first = next(inner.parameters(), None) if inner is not None else None
        key = entry.window_key = id(first) if first is not None else id(entry)
    return key


def note_forward(st, entry, module, grad, training_batch):
    """A root forward ended; `training_batch`: the last batch drawn was the training loader's.
    A model has trained once it ran a forward with gradients in training mode."""
    w = st.window
    if grad and module.training:
        w.trained.add(_key(entry))
        return
    if w.first_evaluation is not None or st.steps < 1 or _key(entry) not in w.trained:
        return
    if not module.training or not training_batch:
        w.first_evaluation = st.step


def note_epoch(st):
    """The training loader began a new pass."""
    if st.window.second_epoch is None:
        st.window.second_epoch = st.step


def _stop_path(st):
    return os.path.join(st.writer.directory, "stop")


def _read_stop(st):
    try:
        with open(_stop_path(st)) as f:
            agreed = json.load(f)
        return int(agreed["step"]), str(agreed["reason"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _agree(st, reason):
    """This rank would end now: have every rank end a few steps on (the first decision wins)."""
    agreed = _read_stop(st)
    if agreed is None:
        agreed = (st.steps + STOP_MARGIN, reason)
        tmp = _stop_path(st) + ".%d" % os.getpid()
        try:
            with open(tmp, "w") as f:
                json.dump({"step": agreed[0], "reason": reason, "pid": os.getpid()}, f)
            if not os.path.exists(_stop_path(st)):
                os.replace(tmp, _stop_path(st))
            else:
                os.unlink(tmp)
                agreed = _read_stop(st) or agreed
        except OSError:
            return None
    return agreed


def _await_verdict(st):
    directory = st.writer.directory
    st.writer.release()  # the binary judges what the file holds
    try:
        open(os.path.join(directory, "checkpoint-%d" % os.getpid()), "w").close()
    except OSError:
        return None
    path = os.path.join(directory, "verdict")
    deadline = time.monotonic() + VERDICT_WAIT_S
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                text = f.read().strip()
            if text:
                return text
        except OSError:
            pass
        time.sleep(0.005)
    return None


def after_step(st):
    """After the process's step `st.steps`: the reason its window ends now, or None."""
    if st.limit and st.steps >= st.limit:
        return "cap_steps" if st.window.cycle else "steps"
    w = st.window
    if not w.cycle:
        return None
    now = st.now()
    if w.first_step is None:
        w.first_step = now
    distributed = st.cadence.distributed()
    if distributed:
        if w.stop_at is None:
            w.stop_at = _read_stop(st)
        if w.stop_at is not None and st.steps >= w.stop_at[0]:
            return w.stop_at[1]
    if w.verdict_step and st.steps == w.verdict_step and w.checkpoint is None:
        paused = time.monotonic()
        w.checkpoint = _await_verdict(st) or "none"
        st.interval.start = st.now()  # the wait is not the program's time
        w.first_step += time.monotonic() - paused
        if w.checkpoint == "stop":
            return "verdict"
    reason = None
    loaders = getattr(st, "train_loader", None)
    if w.first_evaluation is not None and (w.second_epoch is not None or loaders is None) \
            and st.steps >= w.verdict_step:
        reason = "cycle"
    elif w.seconds and now - w.first_step >= w.seconds:
        reason = "cap_seconds"
    if reason is None:
        return None
    if not distributed:
        return reason
    if w.stop_at is None:
        w.stop_at = _agree(st, reason)
    if w.stop_at is not None and st.steps >= w.stop_at[0]:
        return w.stop_at[1]
    return None

