"""Ops at the limit of their domain, read from the loss's graph: which op, how many of its
inputs, and when (a heavy step, the first non-finite loss); the same ops kept clear of their limits give no record.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_saturation.py
"""

import unittest

from runner import fixture, has, kind, only_trace, run

SATURATION = fixture("saturation.py")


def records(case, steps=6):
    result = run([SATURATION, "--case", case, "--steps", str(steps)], steps=0)
    assert result.rc == 0, result.stderr
    return kind(only_trace(result), "saturation")


def only_op(record):
    assert len(record["ops"]) >= 1, record
    return record["ops"][0]


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class AtTheLimit(unittest.TestCase):
    def test_a_masked_log_of_zero_is_found_on_a_heavy_step_with_a_finite_loss(self):
        found = records("log_zero_masked")
        heavy = [r for r in found if r["when"] == "heavy"]
        self.assertEqual(len(heavy), 1, found)
        self.assertEqual(heavy[0]["step"], 1)
        self.assertTrue(heavy[0]["loss_finite"])
        op = only_op(heavy[0])
        self.assertEqual((op["op"], op["grad_fn"]), ("log", "LogBackward0"))
        self.assertEqual(op["elements"], 48)
        self.assertEqual(op["singular"], 48)  # out - out.detach() is 0 everywhere
        self.assertEqual(op["min"], 0.0)
        # its gradient is NaN (0 * inf) and SGD writes it into the weights: the next loss is
        # NaN, and its graph holds no op at its limit (every value is NaN already)
        loss = [r for r in found if r["when"] == "loss"]
        self.assertEqual([(r["step"], r["ops"]) for r in loss], [(2, [])])

    def test_subnormal_inputs_of_a_log_are_counted_apart(self):
        op = only_op([r for r in records("log_subnormal") if r["when"] == "heavy"][0])
        self.assertEqual(op["op"], "log")
        self.assertEqual(op["singular"], 0)
        self.assertGreater(op["subnormal"], 0)
        self.assertLess(op["min"], 1.2e-38)

    def test_a_zero_denominator_per_row(self):
        op = only_op(records("div_zero_rows")[0])
        self.assertEqual(op["op"], "div")
        self.assertEqual((op["elements"], op["singular"]), (16, 4))

    def test_a_python_number_reaching_zero_is_walked_at_the_non_finite_loss(self):
        found = records("div_number")
        loss = [r for r in found if r["when"] == "loss"]
        self.assertEqual(len(loss), 1, found)
        self.assertEqual(loss[0]["step"], 3)
        self.assertFalse(loss[0]["loss_finite"])
        op = only_op(loss[0])
        self.assertEqual((op["op"], op["elements"], op["singular"]), ("div", 1, 1))

    def test_sqrt_acos_and_a_fractional_power_at_their_singular_points(self):
        self.assertEqual(only_op(records("sqrt_zero")[0])["op"], "sqrt")
        self.assertEqual(only_op(records("acos_one")[0])["op"], "acos")
        op = only_op(records("pow_half")[0])
        self.assertEqual((op["op"], op["exponent"]), ("pow", 0.5))

    def test_a_checkpointed_region_is_not_unpacked(self):
        # reading its saved tensors would recompute the region's forward: left unread
        result = run([SATURATION, "--case", "log_zero_checkpointed", "--steps", "4"], steps=0)
        assert result.rc == 0, result.stderr
        records = only_trace(result)
        self.assertEqual([r for r in kind(records, "saturation") if r["when"] == "heavy"], [])
        self.assertEqual(len(kind(records, "model")), 1)

    def test_the_same_ops_clear_of_their_limits_give_nothing(self):
        self.assertEqual(records("clean"), [])


if __name__ == "__main__":
    unittest.main()
