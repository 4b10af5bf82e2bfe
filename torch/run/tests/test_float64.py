"""A float64 model is measured like any other: no probe error, every step with its gradient norm
and its update.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_float64.py
"""

import unittest

from runner import fixture, has, kind, only_trace, run, steps

FLOAT64 = fixture("float64.py")


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class Float64(unittest.TestCase):
    def test_double_precision_steps_are_measured(self):
        for optimizer in ("adam", "lbfgs"):
            with self.subTest(optimizer):
                result = run([FLOAT64, "--optimizer", optimizer], steps=0)
                self.assertEqual(result.rc, 0, result.stderr)
                self.assertNotIn("mldebug", result.stderr)
                records = only_trace(result)
                self.assertEqual(records[-1]["probe_errors"], [])
                self.assertEqual(len(kind(records, "optimizer")), 1)
                ours = steps(records)
                self.assertEqual(len(ours), 6)
                for r in ours:
                    self.assertGreater(r["grad_norm"], 0, r)
                    self.assertGreater(r["update_ratio"], 0, r)
                    self.assertEqual(r["changed"], r["checked"], r)


if __name__ == "__main__":
    unittest.main()
