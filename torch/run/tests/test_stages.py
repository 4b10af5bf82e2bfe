"""The update's size per module group (‖Δw‖ against the weight norm before the step) and the
memory at the stage boundaries of the heavy steps (`memory_stages`).

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_stages.py
"""

import math
import unittest

from runner import fixture, has, kind, only_trace, run, steps

MLP = fixture("mlp_train.py")
POINTS = ["forward", "backward", "backward_end", "step", "step_end"]


def trace_of(*args, limit=6):
    result = run([MLP, *args], steps=limit)
    assert result.rc == 0, result.stderr
    return only_trace(result)


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class UpdatePerGroup(unittest.TestCase):
    def test_groups_add_up_to_the_step_ratio(self):
        records = trace_of()
        heavy = steps(records)[:3]
        grads = kind(records, "grads")
        self.assertEqual([g["step"] for g in grads], [1, 2, 3])
        for s, g in zip(heavy, grads):
            update = math.sqrt(sum(x["update_norm"] ** 2 for x in g["groups"]))
            before = math.sqrt(sum(x["weight_norm_before"] ** 2 for x in g["groups"]))
            self.assertAlmostEqual(update / before, s["update_ratio"], delta=1e-5 * s["update_ratio"])
            for x in g["groups"]:
                self.assertGreater(x["weight_norm_before"], 0)
                # The norm after is another number: the weights moved.
                self.assertNotEqual(x["weight_norm_before"], x["weight_norm"])

    def test_ratio_scales_with_the_learning_rate(self):
        # SGD's first step is lr × gradient (momentum has nothing yet): 10× the rate, 10× the
        # ratio, measured against the same initial weights.
        def first(lr):
            g = kind(trace_of("--lr", str(lr), limit=1), "grads")[0]
            return {x["name"]: x["update_norm"] / x["weight_norm_before"] for x in g["groups"]}

        small, large = first(0.1), first(1.0)
        self.assertEqual(set(small), set(large))
        for name in small:
            self.assertAlmostEqual(large[name] / small[name], 10.0, delta=1e-3)

    def test_lr_zero_moves_no_group(self):
        for g in kind(trace_of("--bug", "lr0", limit=3), "grads"):
            for x in g["groups"]:
                self.assertEqual(x["update_norm"], 0.0)
                self.assertEqual(x["weight_norm_before"], x["weight_norm"])


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class MemoryStages(unittest.TestCase):
    def check_points(self, record):
        stages = record["memory_stages"]
        self.assertEqual(sorted(stages), sorted(POINTS))
        peaks = []
        for point in POINTS:
            m = stages[point]
            self.assertEqual(m["device"], "cpu")
            self.assertGreater(m["rss"], 0)
            self.assertIsNone(m["allocated"])
            peaks.append(m["rss_peak"])
        # Peaks so far never fall: the points are taken in this order.
        self.assertEqual(peaks, sorted(peaks))
        return peaks

    def test_heavy_steps_only(self):
        records = steps(trace_of())
        last = 0
        for r in records[:3]:
            peaks = self.check_points(r)
            self.assertGreaterEqual(peaks[0], last)
            last = peaks[-1]
        for r in records[3:]:
            self.assertNotIn("memory_stages", r)

    def test_accumulation_keeps_one_point_each(self):
        records = steps(trace_of("--accumulate", "3", limit=4))
        for r in records[:3]:
            self.assertEqual(r["backwards"], 3)
            self.check_points(r)

    def test_a_second_optimizer_writes_none(self):
        result = run([fixture("gan.py")], steps=4)
        self.assertEqual(result.rc, 0, result.stderr)
        records = only_trace(result)
        self.assertTrue(all("memory_stages" in r for r in steps(records, 0)[:3]))
        self.assertFalse(any("memory_stages" in r for r in steps(records, 1)))


if __name__ == "__main__":
    unittest.main()
