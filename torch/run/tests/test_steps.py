"""Optimizer steps in the trace: carried gradients (a missing zero_grad) against correct
accumulation, zero_grad in place and a GAN's two optimizers; an optimizer over a copy of the
model, lr 0, parameters left out of the optimizer, a NaN loss.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_steps.py
"""

import unittest

from runner import fixture, has, kind, only_trace, run, steps

MLP = fixture("mlp_train.py")


def line_of(path, text):
    with open(path) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def trace_of(*args, limit=6):
    result = run([MLP, *args], steps=limit)
    assert result.rc == 0, result.stderr
    return only_trace(result)


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class CarriedGradients(unittest.TestCase):
    def test_missing_zero_grad_is_carried_from_step_two(self):
        records = steps(trace_of("--bug", "no_zero_grad"))
        self.assertEqual(records[0]["grads_before_backward"], "unknown")
        for r in records[1:]:
            self.assertEqual(r["grads_before_backward"], "carried", r)
            self.assertEqual(r["grads_carried"], 4)

    def test_accumulation_is_not_carried(self):
        records = steps(trace_of("--accumulate", "4", "--epochs", "3"))
        self.assertEqual(len(records), 6)
        for r in records:
            self.assertEqual((r["backwards"], r["forwards"]), (4, 1 * 4))
        for r in records[1:]:
            self.assertEqual(r["grads_before_backward"], "none", r)
            self.assertEqual(r["grads_carried"], 0)

    def test_zero_grad_in_place_is_zeroed(self):
        for r in steps(trace_of("--bug", "zero_inplace"))[1:]:
            self.assertEqual(r["grads_before_backward"], "zeroed", r)

    def test_gan_discriminator_is_not_carried(self):
        result = run([fixture("gan.py")], steps=0)
        self.assertEqual(result.rc, 0, result.stderr)
        records = only_trace(result)
        for optimizer in (0, 1):
            ours = steps(records, optimizer)
            self.assertEqual(len(ours), 8)
            self.assertEqual([r["step"] for r in ours], list(range(1, 9)))
            self.assertNotIn("carried", {r["grads_before_backward"] for r in ours})
        self.assertEqual(records[-1]["steps"], 8)


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class WhatTheStepDoes(unittest.TestCase):
    def test_clean_run_changes_every_tensor(self):
        records = trace_of()
        optimizer = kind(records, "optimizer")[0]
        self.assertEqual((optimizer["in_models"], optimizer["not_in_models"]), (387, 0))
        for r in steps(records)[:3]:
            self.assertEqual((r["changed"], r["checked"]), (4, 4))
            self.assertGreater(r["update_ratio"], 0)
            self.assertEqual((r["with_grad"], r["without_grad"]), (4, 0))
            self.assertIsNotNone(r["param_checksum"])
            self.assertGreater(r["memory"]["rss"], 0)
            self.assertRegex(r["batch"], "^[0-9a-f]{16}$")
        for r in steps(records)[3:]:
            # Light steps: the 4 largest tensors, sampled.
            self.assertEqual((r["changed"], r["checked"], r["update_sampled"]), (4, 4, True))
            self.assertGreater(r["grad_norm"], 0)
            self.assertIsNone(r["param_checksum"])
        self.assertEqual(len({r["batch"] for r in steps(records)}), 6)
        grads = kind(records, "grads")
        self.assertEqual(len(grads), 3)
        self.assertEqual([g["name"] for g in grads[0]["groups"]], ["0", "3"])
        self.assertEqual((grads[0]["no_grad"], grads[0]["not_in_optimizer"]), ([], []))

    def test_nested_optimizer_steps_count_once(self):
        records = trace_of("--wrap-optimizer")
        self.assertEqual([o["class"] for o in kind(records, "optimizer")], ["Wrapped"])
        self.assertEqual([r["step"] for r in steps(records)], [1, 2, 3, 4, 5, 6])
        self.assertEqual(steps(records, 1), [])
        self.assertEqual(steps(records)[0]["changed"], 4)

    def test_optimizer_over_a_copy(self):
        records = trace_of("--bug", "copy")
        optimizer = kind(records, "optimizer")[0]
        self.assertEqual((optimizer["in_models"], optimizer["not_in_models"]), (0, 387))
        for r in steps(records)[:3]:
            self.assertEqual((r["changed"], r["with_grad"]), (0, 0))

    def test_lr_zero_changes_nothing(self):
        for r in steps(trace_of("--bug", "lr0")):
            self.assertEqual(r["changed"], 0)
            self.assertEqual(r["update_ratio"], 0.0)
            self.assertGreater(r["grad_norm"], 0)

    def test_parameters_left_out_of_the_optimizer(self):
        records = trace_of("--bug", "head_outside")
        self.assertEqual(kind(records, "optimizer")[0]["numel"], 8 * 32 + 32)
        grads = kind(records, "grads")[0]
        self.assertEqual(grads["not_in_optimizer"], ["3.weight", "3.bias"])
        self.assertEqual(grads["not_in_optimizer_numel"], 32 * 3 + 3)

    def test_nan_loss_names_where_it_started(self):
        records = trace_of("--bug", "nan", limit=3)
        found = {r["phase"]: r for r in kind(records, "nonfinite")}
        self.assertEqual(found["loss"]["step"], 1)
        self.assertEqual(found["loss"]["value"], "NaN")
        self.assertEqual(found["loss"]["frames"][-1], "%s:%d" % (MLP, line_of(MLP, "loss.backward()")))
        self.assertEqual(found["gradient"]["module"], "0.weight")
        self.assertEqual((found["parameter"]["when"], found["parameter"]["module"]),
                         ("after_step", "0.weight"))
        self.assertEqual(found["forward"]["step"], 2)
        self.assertFalse(found["forward"]["parameters_finite"])
        self.assertEqual(steps(records)[0]["loss"], "NaN")


if __name__ == "__main__":
    unittest.main()
