"""Programs that use TorchScript, torch.compile, gradient checkpointing, peft LoRA or a
GradScaler run under the probes with stdout and stderr byte-identical to a run without them,
and the trace sees through each: one model despite checkpoint recomputation, the LoRA layers,
the loss unscaled.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_compat.py
"""

import unittest

from runner import fixture, has, kind, only_trace, run, steps

COMPAT = fixture("compat.py")


def both(case):
    plain = run([COMPAT, "--case", case], bootstrap=False)
    watched = run([COMPAT, "--case", case], steps=0)
    return plain, watched


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class Compatibility(unittest.TestCase):
    def same_output(self, case):
        plain, watched = both(case)
        self.assertEqual(plain.rc, 0, plain.stderr)
        self.assertEqual(watched.rc, 0, watched.stderr)
        self.assertEqual(plain.stdout, watched.stdout)
        self.assertEqual(plain.stderr, watched.stderr)
        records = only_trace(watched)
        self.assertEqual(len(steps(records)), 4)
        self.assertEqual(records[-1]["probe_errors"], [])
        return records

    def test_torchscript(self):
        self.same_output("script")

    def test_torch_compile(self):
        records = self.same_output("compile")
        self.assertEqual(kind(records, "model")[0]["wrapper"], "OptimizedModule")

    def test_gradient_scaler_loss_is_unscaled(self):
        records = self.same_output("amp")
        calls = kind(records, "loss_call")
        for call, step in zip(calls, steps(records)):
            self.assertAlmostEqual(step["loss"], call["value"], places=5)

    @unittest.skipUnless(has("transformers"), "needs transformers")
    def test_gradient_checkpointing_recompute_is_no_model(self):
        records = self.same_output("checkpoint")
        self.assertEqual(len(kind(records, "model")), 1)
        self.assertEqual({s["forwards"] for s in steps(records)}, {1})

    @unittest.skipUnless(has("transformers") and has("peft"), "needs transformers and peft")
    def test_lora(self):
        records = self.same_output("lora")
        model = kind(records, "model")[0]
        self.assertEqual((model["lora"], model["shifts_labels"]), (2, True))
        self.assertLess(model["trainable"], model["parameters"] / 10)
        self.assertEqual(kind(records, "labels")[0]["equal_inputs"], 1.0)


if __name__ == "__main__":
    unittest.main()
