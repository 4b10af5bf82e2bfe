"""DataLoaders in the trace: epoch order with and without shuffling, a validation set that
repeats training rows, class counts, input statistics, loader roles.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_data.py
"""

import unittest

from runner import fixture, has, kind, only_trace, run


def trace_of(*args):
    result = run([fixture("data_epochs.py"), *args], steps=0)
    assert result.rc == 0, result.stderr
    return only_trace(result)


def epochs(records, loader):
    return [r for r in kind(records, "epoch") if r["loader"] == loader]


@unittest.skipUnless(has("torch"), "needs torch (.ci/torch-venv)")
class Loaders(unittest.TestCase):
    def test_lengths_and_uncollated_samples_are_no_classes(self):
        epochs = {}
        for batch in ("lengths", "samples", "classes"):
            result = run([fixture("sample_batches.py"), "--batch", batch], steps=0)
            self.assertEqual(result.rc, 0, result.stderr)
            (epochs[batch],) = kind(only_trace(result), "epoch")
        self.assertIsNone(epochs["lengths"]["classes"])
        self.assertEqual(epochs["lengths"]["rows"], 256)
        # A list of 16 (input, target) pairs: 16 rows, fingerprinted as a whole (its first
        # pair repeats in every batch, no batch does).
        self.assertIsNone(epochs["samples"]["classes"])
        self.assertEqual((epochs["samples"]["rows"], epochs["samples"]["duplicate_batches"]),
                         (256, 0))
        # Counted over the batches fingerprinted (cadence.py: not every one).
        self.assertEqual(sum(epochs["classes"]["classes"].values()),
                         16 * epochs["classes"]["batches_fingerprinted"])


    def test_no_shuffle_same_order_every_epoch(self):
        records = trace_of("--no-shuffle")
        loader = kind(records, "loader")[0]
        self.assertEqual((loader["shuffle"], loader["sampler"]), (False, "SequentialSampler"))
        train = epochs(records, 0)
        self.assertEqual([e["epoch"] for e in train], [0, 1])
        self.assertEqual(train[0]["order"], train[1]["order"])
        self.assertEqual({e["role"] for e in train}, {"train"})

    def test_shuffle_changes_the_order(self):
        records = trace_of()
        self.assertTrue(kind(records, "loader")[0]["shuffle"])
        train = epochs(records, 0)
        self.assertNotEqual(train[0]["order"], train[1]["order"])
        for e in train:
            # Rows are fingerprinted for the comparison across ranks only: none in one process.
            self.assertEqual((e["batches"], e["rows"], e["rows_fingerprinted"]), (4, 64, 0))
            self.assertEqual((e["duplicate_rows"], e["duplicate_batches"]), (0, 0))
            self.assertEqual(sum(e["classes"].values()), 64)
            self.assertLess(abs(e["input"]["mean"]), 0.5)
        val = epochs(records, 1)
        self.assertEqual([e["role"] for e in val], ["eval", "eval"])
        overlap = kind(records, "overlap")
        self.assertEqual(len(overlap), 1)
        self.assertEqual((overlap[0]["train_rows"], overlap[0]["other_rows"],
                          overlap[0]["shared_rows"], overlap[0]["complete"]), (64, 32, 0, True))

    def test_validation_rows_shared_with_training(self):
        overlap = kind(trace_of("--overlap", "5"), "overlap")[0]
        self.assertEqual((overlap["train_loader"], overlap["other_loader"]), (0, 1))
        self.assertEqual(overlap["shared_rows"], 5)
        self.assertFalse(overlap["same_dataset"])

    def test_pixel_inputs(self):
        stats = epochs(trace_of("--pixels", "--epochs", "1"), 0)[0]["input"]
        self.assertGreater(stats["mean"], 50)
        self.assertGreater(stats["max"], 200)

    def test_worker_batches_are_seen(self):
        records = trace_of("--workers", "2", "--epochs", "1")
        self.assertEqual((epochs(records, 0)[0]["batches"], epochs(records, 0)[0]["rows"]),
                         (4, 64))


if __name__ == "__main__":
    unittest.main()
