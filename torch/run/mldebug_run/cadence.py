"""Which steps after the heavy ones are measured, and which are only counted.

A measured step costs what the probes read from tensors: the gradients' norm, a sample of the
update, the memory counters, the batch's fingerprint and class counts, the checksums, the
clips' values, the losses kept. A counted step costs counters, a timestamp, the loss and the
learning rate, and writes a short `step` record (`"measured": false`). On a step of tens of
milliseconds a measurement is a fraction of a percent and every step is measured; on a step of
a millisecond one measurement costs a third of the step, so it is taken every few steps.

The rule, from a budget rather than a step count: the light steps' measurements may take at
most BUDGET of the program's own time. The first CALIBRATION light steps are all measured, and
each measurement is timed (perf_counter around the probes' tensor work) beside its step's own
time without it; then the stride is the smallest power of two k with

    median measurement / (k x median step) <= BUDGET,      at most STRIDE_MAX,

and from the step `from` on (the decision's step + DECIDE_MARGIN) the steps measured are those
whose number is a multiple of k. Chosen once, so that a run's measured steps are known from
its `cadence` record, and the same on every rank: in a distributed run the first rank to decide
writes `cadence` (JSON) in the run folder and every rank takes that one (ranks decide at the
same step number and stay within a step of one another, so all read it before `from`).

Always measured: the heavy steps, the calibration steps, a step whose loss is not finite (from
its backward on: the gradients that follow a NaN are what the report shows), and every step
once a non-finite value was seen. `MLDEBUG_RUN_STRIDE=K` fixes the stride (1: every step),
from the step a chosen one would begin at. The loss of every step is watched (probes/losses.py),
measured or not.

What it never does: change what a measured step measures, or read a tensor to decide.
"""

import json
import os
import statistics

from . import world

BUDGET = 0.03  # the share of the program's time the light steps' measurements may take
CALIBRATION = 8  # light steps measured and timed before the stride is chosen
STRIDE_MAX = 64  # a measured step at least every 64 steps, whatever they cost
DECIDE_MARGIN = 3  # steps between the decision and the first step it applies to


def _fixed():
    try:
        k = int(os.environ.get("MLDEBUG_RUN_STRIDE", "0"))
    except ValueError:
        return None
    return max(1, min(k, STRIDE_MAX)) if k > 0 else None


def stride_for(cost, step):
    """The smallest power of two k with cost / (k * step) <= BUDGET, at most STRIDE_MAX."""
    k = 1
    if step is None or step <= 0:
        return STRIDE_MAX if cost > 0 else 1
    while k < STRIDE_MAX and cost > BUDGET * k * step:
        k *= 2
    return k


class Cadence:
    def __init__(self, heavy_steps):
        self.first_light = heavy_steps + 1
        self.decide_at = heavy_steps + CALIBRATION
        self.stride = _fixed()
        self.fixed = self.stride is not None
        # The first step the stride rules: a fixed one from where a chosen one would begin.
        self.start = self.decide_at + DECIDE_MARGIN if self.fixed else None
        self.costs, self.steps = [], []  # per calibration step: measurement s, step s without it
        self.always = False  # a non-finite value was seen: every step from now on
        self.ranks = False  # a distributed run: every step's batch is fingerprinted

    def distributed(self):
        """Whether the run is one of several ranks: read until the decision, then kept."""
        return self.ranks if self.start is not None else world.distributed()

    def measuring(self, step):
        """Whether step `step` (the one a record made now leads to) is measured."""
        if self.always or self.start is None or step < self.start:
            return True
        return step % self.stride == 0

    def note(self, st, step, measured, cost, step_s):
        """Step `step` ended after `step_s` seconds, `cost` of them in measurements (when
        `measured`); at the decision step, choose the stride and write the `cadence` record."""
        if step > self.decide_at:
            return
        self.ranks = world.distributed()  # read until the decision (ranks begin by then)
        if step >= self.first_light and measured and step_s is not None and not self.fixed:
            self.costs.append(cost)
            self.steps.append(max(step_s - cost, 0.0))
        if step < self.decide_at:
            return
        cost = statistics.median(self.costs) if self.costs else None
        plain = statistics.median(self.steps) if self.steps else None
        if not self.fixed:
            decided = {"stride": stride_for(cost or 0.0, plain), "from": step + DECIDE_MARGIN}
            if self.ranks:
                decided = _agree(st, decided)
            self.stride, self.start = decided["stride"], decided["from"]
        st.emit("cadence", step=st.step, stride=self.stride, **{"from": self.start},
                fixed=self.fixed, measure_s=cost, step_s=plain, budget=BUDGET,
                calibrated=len(self.costs))


def _agree(st, mine):
    """The first rank's decision (the run folder's `cadence` file), written unless one is
    there; this rank's own when the file cannot be written or read."""
    path = os.path.join(st.writer.directory, "cadence")
    tmp = "%s.%d" % (path, os.getpid())
    try:
        with open(tmp, "w") as f:
            json.dump(dict(mine, pid=os.getpid()), f)
        try:
            os.link(tmp, path)  # atomic, and refused where a rank decided first
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
        with open(path) as f:  # linked whole: its content was written before
            agreed = json.load(f)
        return {"stride": max(1, min(int(agreed["stride"]), STRIDE_MAX)),
                "from": int(agreed["from"])}
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return mine
