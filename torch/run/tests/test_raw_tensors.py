"""Programs with no nn.Module whose parameters are leaf tensors made with requires_grad: the
backward over the same leaves twice makes them the parameters, each backward to the next one is
a step; leaves new at each backward (input gradients) make none, and are counted. No probe
error, and nothing printed into the program's streams.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_raw_tensors.py
"""

import unittest

from runner import fixture, has, kind, only_trace, run, steps

RAW = fixture("raw_tensors.py")


def trace_of(*args, limit=0):
    result = run([RAW, *args], steps=limit)
    assert result.rc == 0, result.stderr
    assert "mldebug" not in result.stderr and b"mldebug" not in result.stdout, result.stderr
    records = only_trace(result)
    assert records[-1]["probe_errors"] == [], records[-1]["probe_errors"]
    return records


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class RawTensors(unittest.TestCase):
    def test_a_hand_written_update_of_leaf_tensors_is_measured_from_backward_to_backward(self):
        for style in ("sgd", "grad"):
            with self.subTest(style):
                records = trace_of("--style", style)
                self.assertEqual(kind(records, "model"), [])
                optimizer = kind(records, "optimizer")[0]
                self.assertEqual((optimizer["class"], optimizer["manual"]), ("hand-written", True))
                self.assertEqual((optimizer["tensors"], optimizer["numel"]), (4, 5 * 8 + 8 + 8 + 1))
                self.assertEqual((optimizer["in_models"], optimizer["not_in_models"]), (0, 57))
                ours = steps(records)
                # Eight backwards: seven end where the next begins, the last at the end.
                self.assertEqual([r["step"] for r in ours], list(range(1, 9)))
                for r in ours:
                    self.assertEqual((r["forwards"], r["backwards"]), (0, 1))
                    self.assertEqual((r["with_grad"], r["changed"], r["checked"]), (4, 4, 4))
                    self.assertGreater(r["update_ratio"], 0)
                    self.assertGreater(r["grad_norm"], 0)
                    self.assertIsNotNone(r["loss"])
                for r in ours[1:]:
                    self.assertEqual(r["grads_before_backward"], "none", r)
                # Each step's loss is its own backward's, not the next one's.
                self.assertNotEqual(ours[0]["loss"], ours[1]["loss"])
                end = records[-1]
                self.assertEqual((end["steps"], end["backwards"], end["raw_backwards"]), (8, 8, 8))

    def test_the_step_limit_counts_them(self):
        records = trace_of("--style", "sgd", "--iterations", "20", limit=5)
        self.assertEqual(len(steps(records)), 5)
        self.assertEqual((records[-1]["reason"], records[-1]["steps"]), ("steps", 5))

    def test_an_optimizer_over_leaf_tensors_steps_as_any(self):
        records = trace_of("--style", "optim")
        optimizer = kind(records, "optimizer")[0]
        self.assertEqual((optimizer["class"], optimizer["not_in_models"]), ("SGD", 57))
        ours = steps(records)
        self.assertEqual(len(ours), 8)
        for r in ours:
            self.assertEqual((r["with_grad"], r["changed"]), (4, 4))
        self.assertEqual(records[-1]["raw_backwards"], 0)

    def test_input_gradients_and_new_leaves_each_step_are_no_step(self):
        # Saliency: the leaves (fresh inputs) differ at every backward; a loop that makes new
        # parameter tensors each step looks the same. Seen, counted, no step.
        for style in ("saliency", "replace"):
            with self.subTest(style):
                records = trace_of("--style", style)
                self.assertEqual(steps(records), [])
                self.assertEqual(kind(records, "optimizer"), [])
                end = records[-1]
                self.assertEqual((end["backwards"], end["raw_backwards"], end["steps"]),
                                 (8, 8, 0))


if __name__ == "__main__":
    unittest.main()
