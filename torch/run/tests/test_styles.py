"""Programs in other styles than an optimizer over one model: updates written by hand (steps
measured from backward to the next forward), a closure optimizer (LBFGS), parameters on the
meta device, and the splits of an evaluation loader by construction against by content. No
probe error, and nothing printed into the program's streams.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_styles.py
"""

import unittest

from runner import fixture, has, kind, only_trace, run, steps

STYLES = fixture("styles.py")
SPLITS = fixture("splits.py")


def trace_of(script, *args, limit=0):
    result = run([script, *args], steps=limit)
    assert result.rc == 0, result.stderr
    assert "mldebug" not in result.stderr and b"mldebug" not in result.stdout, result.stderr
    records = only_trace(result)
    assert records[-1]["probe_errors"] == [], records[-1]["probe_errors"]
    return records


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class HandWritten(unittest.TestCase):
    def test_each_backward_to_the_next_forward_is_a_step(self):
        for style in ("hand_data", "hand_no_grad"):
            with self.subTest(style):
                records = trace_of(STYLES, "--style", style)
                optimizer = kind(records, "optimizer")[0]
                self.assertEqual((optimizer["class"], optimizer["manual"]), ("hand-written", True))
                self.assertEqual(optimizer["in_models"], optimizer["numel"])
                ours = steps(records)
                # Eight backwards: seven end at the next forward, the last at the end.
                self.assertEqual([r["step"] for r in ours], list(range(1, 9)))
                for r in ours:
                    self.assertEqual((r["forwards"], r["backwards"]), (1, 1))
                    self.assertEqual(r["with_grad"], 4)
                    self.assertEqual(r["changed"], r["checked"])
                    self.assertGreater(r["update_ratio"], 0)
                    self.assertIsNone(r["lr"])
                for r in ours[1:]:
                    self.assertEqual(r["grads_before_backward"], "none", r)
                # The grads records describe the gradients the update used, reset since.
                for g in kind(records, "grads"):
                    self.assertEqual(g["no_grad"], [])
                    self.assertTrue(all(x["grad_norm"] > 0 for x in g["groups"]))
                end = records[-1]
                self.assertEqual((end["steps"], end["backwards"], end["forwards"]), (8, 8, 8))

    def test_the_step_limit_counts_hand_written_steps(self):
        records = trace_of(STYLES, "--style", "hand_data", "--iterations", "20", limit=5)
        self.assertEqual(len(steps(records)), 5)
        self.assertEqual((records[-1]["reason"], records[-1]["steps"]), ("steps", 5))

    def test_an_optimizer_built_after_hand_written_steps_takes_over_the_count(self):
        records = trace_of(STYLES, "--style", "hand_then_sgd", "--iterations", "20", limit=6)
        self.assertEqual([r["step"] for r in steps(records, 0)], [1, 2, 3])
        self.assertEqual([r["step"] for r in steps(records, 1)], [1, 2, 3])
        self.assertEqual((records[-1]["reason"], records[-1]["steps"]), ("steps", 6))

    def test_gradients_reset_in_place_are_zeroed_and_never_reset_are_carried(self):
        for r in steps(trace_of(STYLES, "--style", "hand_inplace"))[1:]:
            self.assertEqual(r["grads_before_backward"], "zeroed", r)
        for r in steps(trace_of(STYLES, "--style", "hand_carried"))[1:]:
            self.assertEqual(r["grads_before_backward"], "carried", r)

    def test_gradients_taken_with_autograd_grad_are_a_backward(self):
        # No backward and no .grad: each torch.autograd.grad over the parameters (not the inner
        # ones with create_graph, MAML's fast weights) to the next forward is a step, measured
        # with the returned gradients; .grad is left as the program had it (None).
        for style, forwards in (("autograd_grad", 1), ("autograd_maml", 3)):
            with self.subTest(style):
                records = trace_of(STYLES, "--style", style)
                optimizer = kind(records, "optimizer")[0]
                self.assertEqual((optimizer["class"], optimizer["manual"]), ("hand-written", True))
                ours = steps(records)
                self.assertEqual([r["step"] for r in ours], list(range(1, 9)))
                for r in ours:
                    self.assertEqual((r["forwards"], r["backwards"]), (forwards, 1))
                    self.assertEqual((r["with_grad"], r["changed"]), (4, 4))
                    self.assertGreater(r["grad_norm"], 0)
                for r in ours[1:]:
                    self.assertEqual(r["grads_before_backward"], "none", r)
                grads = kind(records, "grads")
                self.assertTrue(grads)
                for g in grads:
                    self.assertEqual(sum(x["no_grad"] for x in g["groups"]), 0, g)
                self.assertEqual(records[-1]["backwards"], 8)

    def test_torch_func_gradients_are_counted_not_taken_for_steps(self):
        # torch.func.grad calls torch.autograd.grad on its own wrapped tensors: no step (the
        # module's parameters never change), each call counted in the end record.
        result = run([STYLES, "--style", "func_grad"], steps=0)
        self.assertEqual(result.rc, 0, result.stderr)
        records = only_trace(result)
        self.assertEqual(steps(records), [])
        end = records[-1]
        self.assertEqual((end["backwards"], end["grads_taken"]), (0, 8))

    def test_backwards_without_an_update_change_nothing(self):
        records = trace_of(STYLES, "--style", "hand_none")
        for r in steps(records):
            self.assertEqual(r["changed"], 0, r)


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class Closure(unittest.TestCase):
    def test_lbfgs_steps_hold_their_closures_forwards_and_gradients(self):
        records = trace_of(STYLES, "--style", "lbfgs")
        optimizer = kind(records, "optimizer")[0]
        # Written at the end of the first step, once the closure's forward showed the model.
        self.assertEqual((optimizer["class"], optimizer["not_in_models"]), ("LBFGS", 0))
        self.assertGreater(optimizer["in_models"], 0)
        ours = steps(records)
        self.assertEqual(len(ours), 8)
        for r in ours:
            self.assertGreaterEqual(r["backwards"], 1)
            self.assertEqual(r["forwards"], r["backwards"])
            self.assertEqual(r["grads_before_backward"], "unknown")
            self.assertEqual(r["with_grad"], 4)
            self.assertGreater(r["grad_norm"], 0)
        self.assertGreater(ours[0]["changed"], 0)
        self.assertFalse(records[-1]["in_step"])

    def test_a_program_that_ends_inside_its_first_step_says_so(self):
        records = trace_of(STYLES, "--style", "lbfgs_exit")
        self.assertEqual(steps(records), [])
        end = records[-1]
        self.assertEqual((end["reason"], end["in_step"], end["backwards"]), ("exit", True, 2))


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class Meta(unittest.TestCase):
    def test_meta_tensors_are_left_out_and_the_meta_forward_is_not_the_model(self):
        records = trace_of(STYLES, "--style", "meta")
        self.assertEqual(records[0]["device"], "cpu")
        model = kind(records, "model")
        self.assertEqual([m["device"] for m in model], ["cpu"])
        ours = steps(records)
        self.assertEqual(len(ours), 8)
        self.assertEqual((ours[0]["forwards"], ours[0]["checked"], ours[0]["changed"]), (1, 4, 4))


def overlap_of(split, within=None):
    records = trace_of(SPLITS, "--split", split)
    found = {(o["construction"], o["construction_rows"], o["same_rows"], o["shared_rows"],
              o["other_rows"]) for o in kind(records, "overlap")}
    assert len(found) == 1, found  # one evaluation loader per epoch, each the same split
    if within is not None:
        assert {o["within_train"] for o in kind(records, "overlap")} == {within}, split
    return found.pop()


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class Splits(unittest.TestCase):
    def test_construction_is_told_apart_from_content(self):
        self.assertEqual(overlap_of("disjoint"), ("indices", 0, False, 0, 16))
        how, rows, same, shared, other = overlap_of("indices")
        self.assertEqual((how, same, other), ("indices", False, 16))
        self.assertGreater(rows, 0)
        self.assertEqual(rows, shared)
        self.assertEqual(overlap_of("same_dataset"), ("same_dataset", 48, True, 48, 48))
        self.assertEqual(overlap_of("storage"), ("storage", 16, False, 16, 32))
        self.assertEqual(overlap_of("content", within=False), ("indices", 0, False, 16, 16))

    def test_every_evaluated_row_a_training_row_is_within_the_training_split(self):
        # A sample of the training Subset (train accuracy on a third of its rows): all 16 rows
        # are training rows, not all training rows are evaluated.
        self.assertEqual(overlap_of("sample", within=True), ("indices", 16, False, 16, 16))
        self.assertEqual(overlap_of("same_dataset", within=True)[2], True)
        # Two permutations: part of the validation rows are training rows, not all.
        overlap_of("indices", within=False)
        overlap_of("disjoint", within=False)
        overlap_of("storage", within=False)


if __name__ == "__main__":
    unittest.main()
