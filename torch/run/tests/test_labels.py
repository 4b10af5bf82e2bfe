"""Losses and labels in the trace: a transformers GPT-2 whose collate builds the labels right,
shifts them (shifted twice) or labels the padding; probabilities and log-probabilities passed
to the loss; a token model whose targets are its inputs or the next tokens; packed sequences.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_labels.py
"""

import math
import unittest

from runner import fixture, has, kind, only_trace, run


def trace_of(script, *args):
    result = run([fixture(script), *args], steps=0)
    assert result.rc == 0, result.stderr
    return only_trace(result)


@unittest.skipUnless(has("torch") and has("transformers"), "needs torch and transformers")
class HuggingFaceLabels(unittest.TestCase):
    def labels(self, collate):
        records = trace_of("hf_gpt2.py", "--collate", collate)
        model = kind(records, "model")[0]
        self.assertEqual((model["class"], model["shifts_labels"]), ("GPT2LMHeadModel", True))
        found = kind(records, "labels")
        self.assertEqual([r["step"] for r in found], [1, 2, 3])
        return records, found

    def test_labels_equal_to_inputs(self):
        records, found = self.labels("correct")
        for r in found:
            self.assertEqual((r["source"], r["shifts_labels"]), ("kwargs", True))
            self.assertEqual(r["equal_inputs"], 1.0)
            self.assertLess(r["next_inputs"], 0.2)
            self.assertEqual((r["positions"], r["ignored"]), (8 * 16, 0))
            self.assertEqual((r["pad_from"], r["pad_positions"], r["pad_labelled"]),
                             ("attention_mask", 0, 0))
        # The model's own loss: cross_entropy over the shifted logits, called where the model was.
        call = kind(records, "loss_call")[0]
        self.assertEqual((call["fn"], call["classes"], call["probabilities"]),
                         ("cross_entropy", 64, False))
        self.assertTrue(call["where"].endswith("hf_gpt2.py:%d" % line_of("model(**batch)")))
        self.assertLess(abs(call["value"] - math.log(64)), 1.0)

    def test_labels_shifted_twice(self):
        for r in self.labels("shifted")[1]:
            self.assertEqual(r["next_inputs"], 1.0)
            self.assertLess(r["equal_inputs"], 0.2)
            self.assertEqual(r["ignored"], 8)

    def test_padding_labelled(self):
        for r in self.labels("padded")[1]:
            self.assertEqual((r["pad_positions"], r["pad_labelled"]), (8 * 8, 8 * 8))

    def test_padding_without_mask_is_the_edge_run_of_pad_ids(self):
        for r in self.labels("unmasked")[1]:
            self.assertEqual(r["pad_from"], "pad_token_id")
            # 4 trailing pad ids per row; the one in mid-row is a token, not padding.
            self.assertEqual((r["pad_positions"], r["pad_labelled"]), (8 * 4, 8 * 4))


def line_of(text):
    with open(fixture("hf_gpt2.py")) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class LossCalls(unittest.TestCase):
    def calls(self, case):
        return kind(trace_of("losses.py", "--case", case), "loss_call")

    def test_logits(self):
        calls = self.calls("ce")
        self.assertEqual(len(calls), 3)  # the first three steps only
        for c in calls:
            self.assertEqual((c["classes"], c["targets"], c["ignored"]), (5, 32, 0))
            self.assertEqual((c["probabilities"], c["log_probabilities"]), (False, False))
        self.assertLess(abs(calls[0]["value"] - math.log(5)), 0.5)

    def test_softmax_before_cross_entropy(self):
        for c in self.calls("softmax_ce"):
            self.assertEqual((c["probabilities"], c["log_probabilities"]), (True, False))

    def test_log_softmax_into_nll(self):
        for c in self.calls("logsoftmax_nll"):
            self.assertEqual((c["fn"], c["probabilities"], c["log_probabilities"]),
                             ("nll_loss", False, True))

    def test_token_targets_equal_to_inputs(self):
        found = kind(trace_of("losses.py", "--case", "lm_unshifted"), "labels")
        self.assertEqual(len(found), 3)
        for r in found:
            self.assertEqual((r["source"], r["shifts_labels"]), ("loss", False))
            self.assertEqual((r["equal_inputs"], r["positions"]), (1.0, 48))

    def test_token_targets_shifted_by_the_program(self):
        for r in kind(trace_of("losses.py", "--case", "lm_shifted"), "labels"):
            self.assertEqual((r["source"], r["next_inputs"], r["positions"]), ("loss", 1.0, 44))


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class LabelLayouts(unittest.TestCase):
    def labels(self, case):
        found = kind(trace_of("label_layouts.py", "--case", case), "labels")
        self.assertEqual([r["step"] for r in found], [1, 2, 3])
        return found

    def test_time_major_targets_one_ahead(self):
        for r in self.labels("tm_next"):
            self.assertEqual((r["layout"], r["rows"], r["positions"]), ("time_major", 8, 80))
            self.assertEqual(r["next_inputs"], 1.0)
            self.assertLess(max(r["equal_inputs"], r["two_inputs"]), 0.3)
            self.assertEqual(r["never_supervised"], [])

    def test_time_major_targets_two_ahead(self):
        for r in self.labels("tm_two"):
            self.assertEqual((r["layout"], r["two_inputs"]), ("time_major", 1.0))
            self.assertLess(r["next_inputs"], 0.3)

    def test_a_pad_id_that_is_the_space_is_never_supervised(self):
        for r in self.labels("pad_space"):
            self.assertEqual((r["layout"], r["next_inputs"], r["rows"]), ("batch_major", 1.0, 8))
            (space,) = r["never_supervised"]
            self.assertEqual(space["token"], 0)
            # Every mid-row space is attended and isolated; the trailing padding is not text.
            self.assertGreaterEqual(space["positions"], 8 * 2)
            self.assertEqual(space["isolated"], space["positions"])
            self.assertEqual(r["supervised_targets"] + space["positions"], r["attended_targets"])

    def test_padding_masked_by_length_leaves_every_token_supervised(self):
        for r in self.labels("pad_length"):
            self.assertEqual(r["never_supervised"], [])
            self.assertEqual(r["supervised_targets"], r["attended_targets"])
            self.assertEqual(r["rows_unsupervised"], 0)

    def test_a_prompt_span_is_not_isolated(self):
        for r in self.labels("prompt_spans"):
            for t in r["never_supervised"]:
                self.assertLess(t["isolated"], t["positions"] / 2)

    def test_packed_documents_masked_at_their_boundaries_are_no_token_never_supervised(self):
        for r in self.labels("packed"):
            self.assertEqual((r["layout"], r["next_inputs"], r["rows_unsupervised"]),
                             ("batch_major", 1.0, 0))
            # The masked targets are each document's first token: many ids, none always masked.
            for t in r["never_supervised"]:
                self.assertLess(t["positions"], 8)

    def test_rows_with_nothing_supervised_are_counted(self):
        for r in self.labels("truncated"):
            self.assertEqual((r["rows"], r["rows_unsupervised"]), (8, 6))


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class PackedSequences(unittest.TestCase):
    """Targets packed with the inputs' lengths, compared within the lengths only: a shift of
    k reads 1.0 at k, whether the model packs the padded ids, receives a PackedSequence, or
    reads them time-major."""

    def test_each_shift_in_each_style(self):
        for style, layout in (("inside", "batch_major"), ("given", "time_major"),
                              ("time_major", "time_major")):
            for shift, share in ((0, "equal_inputs"), (1, "next_inputs"), (2, "two_inputs")):
                found = kind(trace_of("packed_lm.py", "--shift", str(shift), "--style", style),
                             "labels")
                self.assertEqual([r["step"] for r in found], [1, 2, 3], (style, shift))
                for r in found:
                    self.assertEqual((r["layout"], r[share], r["pad_from"]),
                                     (layout, 1.0, "lengths"), (style, shift, r))
                    self.assertEqual((r["rows"], r["pad_labelled"], r["rows_unsupervised"]),
                                     (8, 0, 0))
                    self.assertEqual(r["never_supervised"], [])


if __name__ == "__main__":
    unittest.main()
