"""What the trace carries for an estimate of a run's memory: a transformers model's config in
its `model` record (with the parameters' dtype, the attention kernel, activation checkpointing
and a LoRA wrapper's rank and targets), the first training forward's input (and the autocast
dtype it ran under) on the heavy steps' `step` records, and each optimizer group's momentum. A plain module has no config.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_model_config.py
"""

import json
import os
import sys
import unittest

from runner import RUN, fixture, has, kind, only_trace, run, steps


def trace_of(script, *args, limit=0):
    result = run([fixture(script), *args], steps=limit)
    assert result.rc == 0, result.stderr
    return only_trace(result)


@unittest.skipUnless(has("torch") and has("transformers"), "needs torch and transformers")
class HuggingFaceConfig(unittest.TestCase):
    def test_gpt2_record_carries_its_config_and_the_input(self):
        records = trace_of("hf_gpt2.py", "--iterations", "5")
        model = kind(records, "model")[0]
        config = model["config"]
        self.assertEqual(config["model_type"], "gpt2")
        # The fixture's own shape, read back: the config is the model's, not a default one.
        self.assertEqual((config["n_layer"], config["n_embd"], config["vocab_size"]), (2, 32, 64))
        self.assertEqual(model["dtype"], "float32")
        self.assertIn(model["attn_implementation"], ("eager", "sdpa"))
        self.assertIs(model["gradient_checkpointing"], False)
        self.assertIsNone(model["lora_rank"])
        # Only what JSON holds, and within the bound.
        self.assertLessEqual(len(json.dumps(config)), 64 * 1024)
        found = [s.get("input") for s in steps(records)]
        self.assertEqual(len(found), 5)
        for got in found[:3]:
            self.assertEqual(got, {"model": 0, "argument": "input_ids", "shape": [8, 16],
                                   "dtype": "int64", "autocast": None})
        self.assertEqual(found[3:], [None, None])  # heavy steps only
        self.assertIsNone(kind(records, "optimizer")[0]["groups"][0]["momentum"])  # AdamW

    def test_a_config_over_the_bound_is_left_out(self):
        model = kind(trace_of("hf_gpt2.py", "--iterations", "1", "--num-labels", "8000"),
                     "model")[0]
        self.assertIsNone(model["config"])
        # The rest of the record stays.
        self.assertEqual((model["class"], model["pad_token_id"]), ("GPT2LMHeadModel", 0))


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class PlainModule(unittest.TestCase):
    def test_a_plain_module_has_no_config(self):
        records = trace_of("mlp_train.py", "--iterations", "4")
        model = kind(records, "model")[0]
        for field in ("config", "attn_implementation", "gradient_checkpointing", "lora_rank",
                      "lora_targets"):
            self.assertIsNone(model[field], field)
        self.assertEqual(model["dtype"], "float32")
        got = steps(records)[0]["input"]
        self.assertEqual((got["argument"], got["shape"][0]), ("0", 16))
        self.assertEqual(kind(records, "optimizer")[0]["groups"][0]["momentum"], 0.9)  # SGD


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class Autocast(unittest.TestCase):
    def test_autocast_around_or_inside_the_forward_is_seen(self):
        for where, expected in (("around", "bfloat16"), ("inside", "bfloat16"), ("none", None)):
            found = [s["input"]["autocast"] for s in steps(trace_of("autocast.py", "--where", where))]
            self.assertEqual(found, [expected] * 3, where)


class PlainJson(unittest.TestCase):
    """The config filter on its own (no torch needed): what JSON cannot hold is dropped."""

    def setUp(self):
        sys.path.insert(0, RUN)
        self.addCleanup(sys.path.remove, RUN)
        from mldebug_run import models

        self.models = models

    def test_values_json_cannot_hold_are_dropped(self):
        m = self.models
        kept = m._plain_json({"a": 1, "b": [1.5, "x", None, True], "c": {"d": {1: "one"}},
                              "obj": object(), "s": {1, 2}, "bad_list": [1, object()],
                              (1, 2): "tuple key"}, 0)
        self.assertEqual(kept, {"a": 1, "b": [1.5, "x", None, True], "c": {"d": {"1": "one"}}})
        deep = "leaf"
        for _ in range(m.CONFIG_MAX_DEPTH + 2):
            deep = {"k": deep}
        text = json.dumps(m._plain_json(deep, 0))
        self.assertNotIn("leaf", text)
        self.assertLessEqual(text.count("{"), m.CONFIG_MAX_DEPTH)

    def test_a_config_that_raises_or_is_not_transformers_is_none(self):
        class Config:
            pass

        Config.__module__ = "transformers.fake"

        def boom():
            raise RuntimeError("to_dict failed")

        raising = Config()
        raising.to_dict = boom
        self.assertIsNone(self.models._config_dict(raising))
        other = type("Other", (), {"to_dict": lambda self: {"model_type": "gpt2"}})()
        self.assertIsNone(self.models._config_dict(other))
        ok = Config()
        ok.to_dict = lambda: {"model_type": "gpt2", "dtype": object()}
        self.assertEqual(self.models._config_dict(ok), {"model_type": "gpt2"})


if __name__ == "__main__":
    unittest.main()
