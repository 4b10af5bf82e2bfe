"""Ids and targets out of range (probes/ranges.py): an `out_of_range` record before the `end` of
the exception the program raises, naming the module, the offending ids and the table's size;
read before the kernel on the heavy steps, on the way out of the failing call later; nothing
for a program whose ids and targets are in range (padding_idx and ignored targets included).

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_ranges.py
"""

import unittest

from runner import fixture, has, kind, only_trace, run


def traced(bug, at=1):
    result = run([fixture("ids_range.py"), "--bug", bug, "--at", str(at)], steps=0)
    return result, only_trace(result)


@unittest.skipUnless(has("torch"), "needs torch")
class OutOfRange(unittest.TestCase):
    def crashed(self, bug, at, error):
        result, records = traced(bug, at)
        self.assertNotEqual(result.rc, 0)
        self.assertIn(error, result.stderr)  # the program's own exception, unchanged
        found = kind(records, "out_of_range")
        self.assertEqual(len(found), 1, found)
        self.assertEqual(records[-1]["kind"], "end")
        self.assertEqual(records[-1]["reason"], "exception")
        self.assertEqual(records[-1]["probe_errors"], [])
        return found[0]

    def test_an_id_past_the_table_on_a_heavy_step_is_read_before_the_kernel(self):
        r = self.crashed("embedding", 1, "index out of range in self")
        self.assertEqual((r["check"], r["when"], r["step"]), ("embedding", "before", 1))
        self.assertEqual((r["module"], r["class"], r["weight"]), ("tok", "Embedding", "tok.weight"))
        self.assertEqual((r["rows"], r["min"], r["max"]), (20, 20, 22))
        self.assertEqual((r["out_of_range"], r["positions"]), (4, 48))
        self.assertEqual((r["padding_idx"], r["model"], r["consecutive"]), (0, 0, False))
        # The innermost user frame (the model's forward), then the loop's call of the model.
        self.assertTrue(r["where"].endswith("ids_range.py:26"), r["where"])
        self.assertTrue(r["frames"][-2].endswith("ids_range.py:56"), r["frames"])

    def test_a_later_step_is_read_on_the_way_out(self):
        r = self.crashed("embedding", 6, "index out of range in self")
        self.assertEqual((r["when"], r["step"], r["max"], r["out_of_range"]), ("raised", 6, 22, 4))

    def test_a_functional_lookup_names_the_weight(self):
        r = self.crashed("functional", 2, "index out of range in self")
        self.assertEqual((r["module"], r["weight"], r["class"]), ("", "table", None))
        self.assertEqual(r["rows"], 20)

    def test_a_sequence_longer_than_the_position_table(self):
        r = self.crashed("position", 3, "index out of range in self")
        self.assertEqual((r["module"], r["rows"], r["min"], r["max"]), ("pos", 6, 6, 7))
        self.assertEqual((r["out_of_range"], r["positions"], r["consecutive"]), (2, 8, True))

    def test_a_negative_id(self):
        r = self.crashed("negative-id", 5, "index out of range in self")
        self.assertEqual((r["min"], r["max"], r["out_of_range"]), (-1, -1, 1))

    def test_a_target_equal_to_the_class_count(self):
        for at, when in ((2, "before"), (7, "raised")):
            with self.subTest(at=at):
                r = self.crashed("target", at, "Target 4 is out of bounds")
                self.assertEqual((r["check"], r["fn"], r["when"], r["step"]),
                                 ("target", "cross_entropy", when, at))
                self.assertEqual((r["classes"], r["min"], r["max"]), (4, 4, 4))
                self.assertEqual((r["out_of_range"], r["positions"], r["ignore_index"]),
                                 (2, 48, -100))

    def test_a_negative_target_that_is_not_the_ignore_index(self):
        r = self.crashed("negative-target", 1, "Target -1 is out of bounds")
        self.assertEqual((r["min"], r["max"], r["ignore_index"]), (-1, -1, -100))

    def test_ids_and_targets_in_range_write_nothing(self):
        result, records = traced("none")
        self.assertEqual(result.rc, 0, result.stderr)
        self.assertEqual(kind(records, "out_of_range"), [])
        self.assertEqual(records[-1]["probe_errors"], [])


if __name__ == "__main__":
    unittest.main()
