"""`load` and `load_trained` records: what a weights load filled and left at init, made before
the trace opens as well as after, and never a change to what the program sees.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_loads.py
"""

import unittest

from runner import fixture, has, kind, only_trace, run

LOADS = fixture("loads.py")
NET_NUMEL = 20 * 8 + 8 * 8 + 8  # embed (tied with head), body weight and bias


def loads(case):
    result = run([LOADS, "--case", case], steps=0)
    assert result.rc == 0, result.stderr
    records = only_trace(result)
    assert records[-1]["probe_errors"] == [], records[-1]["probe_errors"]
    return result, records, kind(records, "load"), kind(records, "load_trained")


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class Loads(unittest.TestCase):
    def test_a_prefixed_checkpoint_leaves_everything_and_is_recorded_before_the_trace(self):
        result, records, load, trained = loads("prefix")
        self.assertIn("missing 4", result.stdout.decode())  # the program's own result intact
        self.assertEqual(records[0]["kind"], "start")
        self.assertEqual(len(load), 1)
        l = load[0]
        self.assertEqual((l["source"], l["class"], l["strict"]), ("load_state_dict", "Net", False))
        self.assertTrue(l["where"].endswith("loads.py:%d" % _line("result = model.load_state_dict(")), l["where"])
        self.assertEqual((l["keys"], l["missing"], l["unexpected"]), (4, 4, 4))
        self.assertEqual(l["parameters"], NET_NUMEL)
        self.assertEqual(l["missing_numel"], NET_NUMEL)
        self.assertEqual(l["missing_tensors"], 3)  # head.weight is embed.weight
        self.assertEqual((l["unexpected_prefix"], l["unexpected_prefix_matches"]), ("module", 4))
        self.assertEqual(l["renamed"], 3)
        self.assertEqual(trained, [{"kind": "load_trained", "step": 1, "load": 0,
                                    "numel": NET_NUMEL, "gone": 0}])

    def test_a_tied_head_missing_from_the_checkpoint_is_filled(self):
        _, _, load, trained = loads("tied")
        self.assertEqual(load[0]["missing"], 1)
        self.assertEqual(load[0]["missing_numel"], 0)
        self.assertEqual(trained, [])

    def test_a_second_load_refills_what_the_first_left(self):
        _, _, load, _ = loads("two_part")
        self.assertEqual([l["load"] for l in load], [0, 1])
        self.assertEqual(load[0]["missing_numel"], 8 * 8 + 8)
        self.assertEqual(load[1]["missing_numel"], 0)
        self.assertEqual(load[1]["missing_loaded_numel"], 20 * 8)
        self.assertEqual(load[1]["refills"], [{"load": 0, "numel": 8 * 8 + 8}])

    def test_a_layer_replaced_after_the_load_is_gone(self):
        _, _, load, trained = loads("replaced")
        self.assertEqual(load[0]["missing_numel"], 8 * 8 + 8)
        self.assertEqual([(t["numel"], t["gone"]) for t in trained], [(0, 8 * 8 + 8)])

    def test_an_outer_checkpoint_dict_is_counted(self):
        _, _, load, _ = loads("outer")
        self.assertEqual(load[0]["unexpected_mappings"], 1)
        self.assertEqual(sorted(load[0]["unexpected_names"]), ["epoch", "model"])

    def test_a_strict_load_that_raises_reaches_the_program_unchanged(self):
        result, _, load, _ = loads("strict_error")
        self.assertIn("caught RuntimeError", result.stdout.decode())
        self.assertEqual(load, [])

    @unittest.skipUnless(has("transformers"), "needs transformers")
    def test_from_pretrained_reports_the_new_head(self):
        _, records, load, trained = loads("pretrained")
        self.assertEqual(len(load), 1, load)
        l = load[0]
        self.assertEqual((l["source"], l["class"]), ("from_pretrained",
                                                     "BertForSequenceClassification"))
        self.assertTrue(l["where"].endswith("loads.py:%d" % _line("from_pretrained(folder")), l)
        self.assertIn("classifier.weight", l["missing_names"])
        self.assertEqual(l["missing_numel"], 8 * 8 + 8 + 3 * 8 + 3)  # pooler and classifier
        self.assertEqual(l["missing_base_numel"], 8 * 8 + 8)  # the pooler is in the body
        self.assertEqual(l["mismatched"], 0)
        self.assertGreater(l["unexpected"], 0)  # the masked-LM head
        self.assertEqual([t["numel"] for t in trained], [l["missing_numel"]])

    @unittest.skipUnless(has("transformers"), "needs transformers")
    def test_from_pretrained_reports_body_layers_reinitialised_for_their_shape(self):
        _, _, load, _ = loads("mismatched")
        l = load[0]
        self.assertEqual(l["ignore_mismatched_sizes"], True)
        self.assertIn("bert.embeddings.word_embeddings.weight", l["mismatched_names"])
        self.assertEqual(l["mismatched_base_numel"], 24 * 8)
        self.assertEqual(l["mismatched_numel"], 24 * 8)
        self.assertNotIn("bert.embeddings.word_embeddings.weight", l["missing_names"])


def _line(text):
    with open(LOADS) as f:
        for number, line in enumerate(f, 1):
            if text in line:
                return number
    raise AssertionError(text)


if __name__ == "__main__":
    unittest.main()
