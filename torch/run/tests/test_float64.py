"""A float64, a complex or a sparse-gradient model is measured like any other: no probe error, nothing printed into
the program's output, every step with its gradient norm and its update.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_float64.py
"""

import unittest

from runner import fixture, has, kind, only_trace, run, steps

FLOAT64 = fixture("float64.py")
COMPLEX = fixture("complex.py")
SPARSE = fixture("sparse.py")


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

    def test_complex_steps_are_measured_and_nothing_is_printed(self):
        result = run([COMPLEX], steps=0)
        self.assertEqual(result.rc, 0, result.stderr)
        # torch's own warning on complex modules is the program's; nothing comes from the probes.
        self.assertNotIn("mldebug", result.stderr)
        self.assertNotIn("discards the imaginary part", result.stderr)
        records = only_trace(result)
        self.assertEqual(records[-1]["probe_errors"], [])
        ours = steps(records)
        self.assertEqual(len(ours), 6)
        for r in ours:
            self.assertGreater(r["grad_norm"], 0, r)
            self.assertGreater(r["update_ratio"], 0, r)
            self.assertEqual(r["changed"], r["checked"], r)

    def test_a_sparse_gradient_is_a_gradient(self):
        result = run([SPARSE], steps=0)
        self.assertEqual(result.rc, 0, result.stderr)
        records = only_trace(result)
        self.assertEqual(records[-1]["probe_errors"], [])
        grads = kind(records, "grads")
        self.assertTrue(grads)
        for g in grads:
            self.assertEqual(g["no_grad"], [], g)
        for r in steps(records):
            self.assertEqual(r["without_grad"], 0, r)
            self.assertGreater(r["grad_norm"], 0, r)


if __name__ == "__main__":
    unittest.main()
