"""The cycle window (window.py): a process ends once it has run its first evaluation and its
training loader has started a second pass, or at its cap in steps; a no_grad forward on the
training batch in training mode is no evaluation; a fixed window is as before.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_window.py
"""

import os
import unittest

from runner import fixture, has, only_trace, run, steps

LOOP = fixture("cycle_loop.py")


def end_of(*args, limit=50, cycle=True, seconds=None):
    if cycle:
        os.environ["MLDEBUG_RUN_WINDOW"] = "cycle"
    if seconds is not None:
        os.environ["MLDEBUG_RUN_SECONDS"] = str(seconds)
    try:
        result = run([LOOP, *args], steps=limit)
    finally:
        os.environ.pop("MLDEBUG_RUN_WINDOW", None)
        os.environ.pop("MLDEBUG_RUN_SECONDS", None)
    assert result.rc == 0, result.stderr
    records = only_trace(result)
    return records[0], records[-1], steps(records)


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class CycleWindow(unittest.TestCase):
    def test_ends_after_the_first_evaluation_and_the_second_epoch(self):
        start, end, recs = end_of("--batches", "6", "--eval-every", "4", "--eval-mode")
        self.assertEqual(start["window"]["cycle"], True)
        self.assertEqual(start["window"]["steps"], 50)
        self.assertEqual((end["reason"], end["window"]), ("steps", "cycle"))
        self.assertEqual(end["first_evaluation"], 5)  # the evaluation after step 4
        self.assertEqual(end["second_epoch"], 7)  # the second pass begins in step 7
        self.assertEqual(end["steps"], 7)
        self.assertEqual(len(recs), 7)

    def test_an_evaluation_in_training_mode_counts(self):
        _, end, _ = end_of("--batches", "6", "--eval-every", "9")
        self.assertEqual((end["window"], end["first_evaluation"], end["steps"]), ("cycle", 10, 10))

    def test_a_metric_on_the_training_batch_is_no_evaluation(self):
        _, end, _ = end_of("--batches", "6", "--epochs", "20", "--train-metric", limit=30)
        self.assertEqual((end["window"], end["first_evaluation"], end["steps"]),
                         ("cap_steps", None, 30))
        self.assertEqual(end["second_epoch"], 7)

    def test_without_a_training_loader_the_evaluation_alone_ends_it(self):
        _, end, _ = end_of("--no-loader", "--batches", "50", "--eval-every", "12", "--eval-mode")
        self.assertEqual((end["window"], end["first_evaluation"], end["second_epoch"]),
                         ("cycle", 13, None))
        self.assertEqual(end["steps"], 13)

    def test_the_time_cap_ends_it_before_the_step_cap(self):
        start, end, recs = end_of("--batches", "6", "--epochs", "5000", limit=100000, seconds=0.5)
        self.assertEqual(start["window"]["seconds"], 0.5)
        self.assertEqual((end["reason"], end["window"]), ("steps", "cap_seconds"))
        self.assertLess(end["steps"], 100000)
        self.assertGreaterEqual(recs[-1]["time"] - recs[0]["time"], 0.5)

    def test_a_program_that_ends_first_says_what_it_saw(self):
        _, end, _ = end_of("--batches", "6", "--epochs", "2", limit=1000)
        self.assertEqual((end["reason"], end["window"], end["first_evaluation"]),
                         ("exit", None, None))
        self.assertEqual(end["second_epoch"], 7)

    def test_a_fixed_window_is_the_steps_alone(self):
        start, end, _ = end_of("--batches", "6", "--eval-every", "2", limit=9, cycle=False)
        self.assertIsNone(start["window"])
        self.assertEqual((end["window"], end["steps"]), ("steps", 9))
        self.assertEqual(end["first_evaluation"], 3)


if __name__ == "__main__":
    unittest.main()
