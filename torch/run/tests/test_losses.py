"""The loss backward is called on: earlier steps' losses still alive with their graph (a list
of undetached losses) against a plain loop, a detached list and a previous loss kept by name;
the loss's reduction read from its own graph; peft configs built and the adapter modules of
the model trained.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_losses.py
"""

import unittest

from runner import fixture, has, kind, only_trace, run, steps

LOSSES = fixture("loss_graph.py")
WATCH = 16  # probes/losses.py LOSS_WATCH


def trace_of(*args, stride=1):
    # Every step measured unless `stride` (a step of this size is otherwise measured every few:
    # test_cadence).
    result = run([LOSSES, *args], steps=0, env={"MLDEBUG_RUN_STRIDE": str(stride)})
    assert result.rc == 0, result.stderr
    return steps(only_trace(result))


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class KeptLosses(unittest.TestCase):
    def test_a_list_of_losses_keeps_every_step(self):
        for keep in ("list", "scaled", "retained"):
            records = trace_of("--keep", keep)
            self.assertEqual([r["losses_alive"] for r in records[:WATCH + 1]],
                             list(range(WATCH + 1)), keep)
            self.assertEqual({r["losses_alive"] for r in records[WATCH:]}, {WATCH}, keep)
            self.assertEqual(records[-1]["losses_watched"], WATCH)
            retained = WATCH if keep == "retained" else 0
            self.assertEqual(records[-1]["losses_retained"], retained, keep)

    def test_a_plain_loop_and_a_detached_list_keep_none(self):
        for keep in ("none", "detached"):
            self.assertEqual({r["losses_alive"] for r in trace_of("--keep", keep)}, {0}, keep)

    def test_the_previous_loss_by_name_is_one(self):
        self.assertEqual({r["losses_alive"] for r in trace_of("--keep", "last")[1:]}, {1})

    def test_every_step_is_watched_whether_measured_or_not(self):
        # Measured one step in 4 from step 14: every step, measured or not, still counts the
        # losses of the 16 steps before it, and the previous step's loss kept by name.
        listed = trace_of("--keep", "list", "--steps", "40", stride=4)
        self.assertIn(False, [r.get("measured", True) for r in listed])
        self.assertEqual([r["losses_alive"] for r in listed],
                         [min(s, WATCH) for s in range(40)])
        last = trace_of("--keep", "last", "--steps", "40", stride=4)
        self.assertEqual({r["losses_alive"] for r in last[1:]}, {1})


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class Reduction(unittest.TestCase):
    def reduction(self, how):
        records = trace_of("--reduction", how, "--batch", "16")
        heavy = [r.get("loss_reduction") for r in records[:3]]
        self.assertTrue(all(h == heavy[0] for h in heavy), heavy)
        self.assertNotIn("loss_reduction", records[3])  # light steps: not read
        return heavy[0]

    def test_reductions_read_from_the_graph(self):
        self.assertEqual(self.reduction("mean"),
                         {"grad_fn": "NllLossBackward0", "reduction": "mean", "elements": 16})
        self.assertEqual(self.reduction("sum"),
                         {"grad_fn": "NllLossBackward0", "reduction": "sum", "elements": 16})
        self.assertEqual(self.reduction("none_sum"),
                         {"grad_fn": "SumBackward0", "reduction": "sum", "elements": 16})
        self.assertEqual(self.reduction("none_mean"),
                         {"grad_fn": "MeanBackward0", "reduction": "mean", "elements": 16})
        self.assertEqual(self.reduction("mse_sum"),
                         {"grad_fn": "MseLossBackward0", "reduction": "sum", "elements": 64})

    def test_a_sum_divided_by_hand_is_unknown(self):
        self.assertEqual(self.reduction("divided"),
                         {"grad_fn": "DivBackward0", "reduction": None, "elements": None})


@unittest.skipUnless(has("torch") and has("peft") and has("transformers"),
                     "needs torch, transformers and peft")
class Adapters(unittest.TestCase):
    def adapters(self, apply):
        result = run([fixture("peft_config.py"), "--apply", apply], steps=0)
        self.assertEqual(result.rc, 0, result.stderr)
        records = only_trace(result)
        errors = kind(records, "end")[0]["probe_errors"]
        self.assertEqual([e for e in errors if e.startswith(("adapters", "losses"))], [])
        (record,) = kind(records, "adapters")
        self.assertEqual(record["step"], 1)
        (config,) = record["configs"]
        self.assertEqual((config["class"], config["peft_type"], config["r"],
                          config["target_modules"]),
                         ("LoraConfig", "LORA", 4, ["q_proj", "v_proj"]))
        self.assertTrue(config["where"].endswith("peft_config.py:21"), config["where"])
        (model,) = record["models"]
        return model

    def test_applied(self):
        model = self.adapters("yes")
        self.assertEqual(model["adapter_modules"], 2)
        self.assertLess(model["trainable"], model["parameters"] / 10)

    def test_not_applied_or_applied_to_a_copy(self):
        for apply in ("no", "copy"):
            model = self.adapters(apply)
            self.assertEqual(model["adapter_modules"], 0, apply)
            self.assertEqual(model["trainable"], model["parameters"], apply)

    def test_no_record_without_peft(self):
        self.assertEqual(kind(only_trace(run([LOSSES, "--steps", "2"], steps=0)), "adapters"), [])


if __name__ == "__main__":
    unittest.main()
