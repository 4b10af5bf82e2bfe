"""Module modes in the trace: training in eval mode, evaluating in training mode, functional
dropout that ignores eval(), BatchNorm statistics updated during an evaluation; a clean loop
writes none of them.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_modes.py
"""

import unittest

from runner import fixture, has, kind, only_trace, run, steps


def modes(case):
    result = run([fixture("modes.py"), "--case", case], steps=0)
    assert result.rc == 0, result.stderr
    records = only_trace(result)
    return records, {r["event"]: r for r in kind(records, "mode")}


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class Modes(unittest.TestCase):
    def test_clean(self):
        records, found = modes("clean")
        self.assertEqual(found, {})
        self.assertEqual({r["training"] for r in steps(records)}, {True})
        self.assertEqual(sum(r["nograd_forwards"] for r in steps(records)), 2)

    def test_training_in_eval_mode(self):
        records, found = modes("eval_train")
        self.assertEqual(list(found), ["train_step_in_eval"])
        self.assertEqual(found["train_step_in_eval"]["step"], 1)
        self.assertEqual({r["training"] for r in steps(records)}, {False})
        self.assertEqual(kind(records, "model")[0]["dropout"], 1)

    def test_evaluation_in_training_mode(self):
        _, found = modes("eval_in_train_mode")
        self.assertEqual(list(found), ["eval_forward_in_train_mode"])
        self.assertEqual((found["eval_forward_in_train_mode"]["module"],
                          found["eval_forward_in_train_mode"]["class"]), ("1", "Dropout"))

    def test_functional_dropout_in_eval(self):
        _, found = modes("functional_dropout")
        self.assertEqual(list(found), ["dropout_in_eval"])
        self.assertEqual((found["dropout_in_eval"]["module"], found["dropout_in_eval"]["class"]),
                         ("0", "Block"))

    def test_batchnorm_updated_in_eval(self):
        _, found = modes("batchnorm_eval")
        self.assertEqual(set(found), {"batchnorm_updated_in_eval", "eval_forward_in_train_mode"})
        self.assertEqual(found["batchnorm_updated_in_eval"]["module"], "1")


if __name__ == "__main__":
    unittest.main()
