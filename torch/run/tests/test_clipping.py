"""Gradient clips and what each optimizer group holds: every clip_grad_norm_ / clip_grad_value_
call is on the step record of the optimizer whose tensors it clipped, with its threshold, the
norm it returned and whether a GradScaler's scale was still on the gradients; the program's
output is byte-identical under the probes; the optimizer record counts each group's norm
weights, biases and embedding tables.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_clipping.py
"""

import unittest

from runner import fixture, has, kind, only_trace, run, steps

CLIPPING = fixture("clipping.py")


def watched(case, same_output=True):
    plain = run([CLIPPING, "--case", case], bootstrap=False)
    result = run([CLIPPING, "--case", case], steps=0)
    assert result.rc == 0, result.stderr
    if same_output:
        assert (plain.stdout, plain.stderr) == (result.stdout, result.stderr), (plain, result)
    records = only_trace(result)
    assert records[-1]["probe_errors"] == [], records[-1]["probe_errors"]
    return records


def printed_norms(case):
    out = run([CLIPPING, "--case", case], bootstrap=False).stdout
    text = out.decode() if isinstance(out, bytes) else out
    return [float(line.split()[1]) for line in text.splitlines() if line.startswith("norm ")]


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class Clips(unittest.TestCase):
    def test_a_clip_before_unscale_sees_scaled_gradients(self):
        records = watched("amp-before")
        ours = steps(records)
        self.assertEqual(len(ours), 4)
        norms = printed_norms("amp-before")
        for s, printed in zip(ours, norms):
            (c,) = s["clips"]
            self.assertEqual((c["kind"], c["threshold"], c["norm_type"], c["tensors"]),
                             ("norm", 1.0, 2.0, 5))
            self.assertTrue(c["scaled"])
            self.assertEqual(c["scale"], 1024.0)
            self.assertAlmostEqual(c["norm"], printed, places=3)
            # The step sees the clipped gradients unscaled: the threshold over the scale.
            self.assertAlmostEqual(s["grad_norm"], 1.0 / 1024.0, places=6)

    def test_a_clip_after_unscale_sees_the_true_norm(self):
        for s in steps(watched("amp-after")):
            (c,) = s["clips"]
            self.assertFalse(c["scaled"])
            self.assertIsNone(c["scale"])
            self.assertLess(c["norm"], 10.0)

    def test_a_generator_of_parameters_is_clipped_as_without_the_probes(self):
        for s in steps(watched("plain")):
            (c,) = s["clips"]
            self.assertEqual((c["threshold"], c["tensors"], c["scaled"]), (0.5, 5, False))
            self.assertAlmostEqual(s["grad_norm"], min(c["norm"], 0.5), places=5)

    def test_clip_grad_value_has_a_threshold_and_no_norm(self):
        for s in steps(watched("value")):
            (c,) = s["clips"]
            self.assertEqual((c["kind"], c["threshold"], c["norm"], c["norm_type"]),
                             ("value", 0.01, None, None))

    def test_a_hand_written_update_gets_its_clip(self):
        records = watched("hand")
        self.assertTrue(kind(records, "optimizer")[0]["manual"])
        ours = steps(records)
        self.assertGreaterEqual(len(ours), 3)
        for s in ours:
            (c,) = s["clips"]
            self.assertEqual(c["threshold"], 0.05)
            # Its grad_norm is measured before the clip: the norm the clip returned.
            self.assertAlmostEqual(s["grad_norm"], c["norm"], places=5)

    def test_an_optimizer_the_scaler_does_not_step_is_not_scaled(self):
        records = watched("two-optimizers")
        for s in steps(records, optimizer=0):
            self.assertEqual([c["scaled"] for c in s["clips"]], [False])
        second = steps(records, optimizer=1)
        self.assertEqual(len(second), 4)
        for s in second:
            (c,) = s["clips"]
            self.assertEqual((c["threshold"], c["scaled"]), (0.5, False))


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class Groups(unittest.TestCase):
    def test_one_group_over_everything_holds_every_kind(self):
        opt = kind(watched("decay"), "optimizer")[0]
        (g,) = opt["groups"]
        self.assertEqual(g["weight_decay"], 0.01)
        self.assertEqual(g["kinds"], {"norm": {"tensors": 2, "numel": 16},
                                      "embedding": {"tensors": 1, "numel": 160},
                                      "bias": {"tensors": 1, "numel": 4}})
        self.assertTrue(g["decoupled_weight_decay"])

    def test_a_no_decay_group_holds_the_one_dimensional_parameters(self):
        opt = kind(watched("split"), "optimizer")[0]
        decayed, kept = opt["groups"]
        self.assertEqual((decayed["weight_decay"], decayed["kinds"]), (0.1, {}))
        self.assertEqual(kept["weight_decay"], 0.0)
        self.assertEqual(sorted(kept["kinds"]), ["bias", "embedding", "norm"])

    def test_adam_says_its_decay_is_coupled(self):
        opt = kind(watched("adam"), "optimizer")[0]
        self.assertEqual(opt["class"], "Adam")
        (g,) = opt["groups"]
        self.assertEqual((g["weight_decay"], g["decoupled_weight_decay"]), (0.1, False))


if __name__ == "__main__":
    unittest.main()
