"""Which light steps are measured (mldebug_run/cadence.py): every step to the decision, then
the multiples of a stride chosen from what a measurement costs beside the step, or fixed by
MLDEBUG_RUN_STRIDE; every step from a non-finite loss on; the short records of the others,
whole and in order; the gradients' reset still judged on the measured steps.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_cadence.py
"""

import json
import subprocess
import sys
import unittest

from runner import RUN, fixture, has, kind, only_trace, run, steps

LOOP = fixture("cadence_loop.py")


class _Cadence:
    """cadence.py's constants and `stride_for`, computed in another interpreter: importing the
    probes' package here would be inherited by the runs that runner.py forks from this one."""

    def __init__(self):
        code = ("import json, sys; from mldebug_run import cadence as c; "
                "print(json.dumps({'BUDGET': c.BUDGET, 'STRIDE_MAX': c.STRIDE_MAX, "
                "'k': [c.stride_for(*a) for a in json.load(sys.stdin)]}))")
        self.cases = [(0.0001, 0.1), (0.0004, 0.0015), (1.0, 0.001), (0.001, None),
                      (0.003, 0.01), (0.02, 0.5)]
        out = subprocess.run([sys.executable, "-B", "-c", code], input=json.dumps(self.cases),
                             capture_output=True, text=True, check=True,
                             env={"PYTHONPATH": RUN, "PATH": ""})
        got = json.loads(out.stdout)
        self.BUDGET, self.STRIDE_MAX = got["BUDGET"], got["STRIDE_MAX"]
        self.strides = dict(zip(map(tuple, self.cases), got["k"]))

    def stride_for(self, cost, step):
        k = 1
        while step and k < self.STRIDE_MAX and cost > self.BUDGET * k * step:
            k *= 2
        return k if step else self.STRIDE_MAX


cadence = _Cadence()


def trace_of(*args, stride=None):
    env = {"MLDEBUG_RUN_STRIDE": str(stride)} if stride else {"MLDEBUG_RUN_STRIDE": ""}
    result = run([LOOP, *args], steps=0, env=env)
    assert result.rc == 0, result.stderr
    return only_trace(result)


def measured(records):
    return [r["step"] for r in steps(records) if r.get("measured", True)]


class Stride(unittest.TestCase):
    def test_the_smallest_power_of_two_within_the_budget(self):
        k = cadence.strides
        self.assertEqual(k[(0.0001, 0.1)], 1)  # 0.1% of the step
        self.assertEqual(k[(0.0004, 0.0015)], 16)  # 27% of it: every 16th step, 1.7%
        self.assertEqual(k[(1.0, 0.001)], cadence.STRIDE_MAX)
        self.assertEqual(k[(0.001, None)], cadence.STRIDE_MAX)
        for cost, step in ((0.0004, 0.0015), (0.003, 0.01), (0.02, 0.5)):
            self.assertEqual(k[(cost, step)], cadence.stride_for(cost, step))
            self.assertLessEqual(cost / (k[(cost, step)] * step), cadence.BUDGET)
            if k[(cost, step)] > 1:
                self.assertGreater(cost / (k[(cost, step)] // 2 * step), cadence.BUDGET)


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class Cadence(unittest.TestCase):
    def test_a_fixed_stride(self):
        records = trace_of("--steps", "30", stride=4)
        self.assertEqual([r["step"] for r in steps(records)], list(range(1, 31)))
        self.assertEqual(measured(records),
                         list(range(1, 14)) + [s for s in range(14, 31) if s % 4 == 0])
        (c,) = kind(records, "cadence")
        self.assertEqual((c["stride"], c["from"], c["fixed"]), (4, 14, True))
        for r in steps(records):
            self.assertIsNotNone(r["loss"])
            self.assertIsNotNone(r["step_s"])
            if r.get("measured", True):
                self.assertIsNotNone(r["grad_norm"])
                self.assertIsNotNone(r["memory"])
            else:
                self.assertNotIn("grad_norm", r)
                self.assertNotIn("update_ratio", r)
                self.assertIsNotNone(r["memory"]["rss"])  # on the CPU: every step's
        (epoch,) = [e for e in kind(records, "epoch") if e["epoch"] == 0]
        self.assertEqual(epoch["batches"], 30)  # batch s is drawn for step s
        fingerprinted = 13 + len([s for s in range(14, 31) if s % 4 == 0])
        self.assertEqual(epoch["batches_fingerprinted"], fingerprinted)

    def test_a_millisecond_step_is_measured_every_few(self):
        records = trace_of("--steps", "60")
        (c,) = kind(records, "cadence")
        self.assertFalse(c["fixed"])
        self.assertEqual((c["step"], c["from"], c["calibrated"]), (11, 14, 8))
        self.assertEqual(c["stride"], cadence.stride_for(c["measure_s"], c["step_s"]))
        self.assertGreater(c["stride"], 1, c)  # a measurement costs more than 3% of this step
        k = c["stride"]
        self.assertEqual(measured(records),
                         list(range(1, 14)) + [s for s in range(14, 61) if s % k == 0])

    def test_a_slow_step_is_measured_every_time(self):
        records = trace_of("--steps", "14", "--sleep", "40")
        (c,) = kind(records, "cadence")
        self.assertEqual(c["stride"], 1, c)
        self.assertEqual(measured(records), list(range(1, 15)))

    def test_every_step_from_a_non_finite_loss(self):
        records = trace_of("--steps", "30", "--nan-at", "18", stride=8)
        self.assertEqual(measured(records), list(range(1, 14)) + [16] + list(range(18, 31)))
        first = next(r for r in steps(records) if r["step"] == 18)
        self.assertEqual(first["loss"], "NaN")

    def test_a_hand_written_update(self):
        records = trace_of("--steps", "20", "--manual", stride=4)
        self.assertEqual(measured(records), list(range(1, 14)) + [16, 20])
        for r in steps(records):
            if r.get("measured", True) and r["step"] > 1:
                self.assertGreater(r["changed"], 0, r)

    def test_carried_gradients_are_seen_on_measured_steps(self):
        carried = trace_of("--steps", "20", "--no-zero-grad", stride=4)
        zeroed = trace_of("--steps", "20", stride=4)
        for r in steps(carried):
            if r.get("measured", True) and r["step"] > 1:
                self.assertEqual(r["grads_before_backward"], "carried", r)
        self.assertNotIn("carried", {r.get("grads_before_backward") for r in steps(zeroed)})
        self.assertNotIn("unknown", {r.get("grads_before_backward")
                                     for r in steps(zeroed) if r["step"] > 1})

    def test_a_hand_written_update_that_zeroes_in_place(self):
        # Reset after the update, before the next forward: seen as a reset on every measured
        # step, whatever the stride; the gradients the update used are the `grads` records'.
        for stride in (1, 2, 4):
            records = trace_of("--steps", "20", "--manual", "--in-place", stride=stride)
            before = {r.get("grads_before_backward") for r in steps(records)
                      if r.get("measured", True) and r["step"] > 1}
            self.assertEqual(before, {"zeroed"}, stride)
            for g in kind(records, "grads"):
                for group in g["groups"]:
                    self.assertEqual(group["zero_grad"], 0, (stride, group))
                    self.assertGreater(group["grad_norm"], 0, (stride, group))

    def test_clips_are_read_on_measured_steps_only(self):
        records = trace_of("--steps", "20", "--clip", stride=4)
        clipped = [r["step"] for r in steps(records) if r.get("clips")]
        self.assertEqual(clipped, list(range(1, 14)) + [16, 20])


if __name__ == "__main__":
    unittest.main()
