"""Two ranks under torchrun (gloo, CPU): each writes its own trace (the launcher none), ranks
and world size are recorded, DDP keeps parameter and gradient checksums equal across ranks
while each rank sees its own batches; without a DistributedSampler the ranks see the same
batches; without DDP the gradients differ. The cross-rank probes: each epoch's row sample
(the same rows on every rank, disjoint across ranks with a correct sampler, shared with a
sampler seeded per rank), BatchNorm running statistics, and MLDEBUG_RUN_RANKS=0 turning both off.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_distributed.py
"""

import functools
import unittest

from runner import fixture, has, kind, run, steps

TORCHRUN = ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]


def ranks(*args, limit=5, env=None):
    result = run([fixture("ddp.py"), *args], steps=limit, flags=TORCHRUN, env=env)
    assert result.rc == 0, result.stderr
    assert len(result.traces) == 2, result.stderr
    by_rank = {}
    for records in result.traces.values():
        by_rank[kind(records, "dist")[0]["rank"]] = records
    return by_rank


@functools.lru_cache(maxsize=None)
def default_ranks():
    """The default run (DDP, a DistributedSampler, no BatchNorm) to its own end: two epochs of
    8 steps (the limit, 17, is not reached). One torchrun start shared by the tests that read
    it."""
    return ranks(limit=17)


@functools.lru_cache(maxsize=None)
def seed_per_rank_ranks():
    """A DistributedSampler seeded per rank, and a BatchNorm layer: one torchrun start shared by
    the row-sample test and the BatchNorm test (each torchrun start is two ranks and a launcher
    importing torch)."""
    return ranks("--sampler", "seed-per-rank", "--bn", limit=9)


def distributed_ok():
    if not has("torch"):
        return False
    import torch.distributed

    return torch.distributed.is_available() and torch.distributed.is_gloo_available()


@unittest.skipUnless(distributed_ok(), "needs torch.distributed with gloo")
class TwoRanks(unittest.TestCase):
    def test_ddp_with_distributed_sampler(self):
        by_rank = default_ranks()
        self.assertEqual(sorted(by_rank), [0, 1])
        for rank, records in by_rank.items():
            start = records[0]
            self.assertEqual((start["rank"], start["world_size"], start["local_rank"]), (rank, 2, rank))
            self.assertEqual(kind(records, "model")[0]["wrapper"], "DistributedDataParallel")
            self.assertTrue(kind(records, "loader")[0]["distributed"])
            self.assertEqual((records[-1]["reason"], records[-1]["steps"]), ("exit", 16))
        zero, one = steps(by_rank[0]), steps(by_rank[1])
        self.assertEqual(len(zero), 16)
        for a, b in zip(zero[:3], one[:3]):
            self.assertEqual(a["param_checksum"], b["param_checksum"])
            self.assertEqual(a["grad_checksum"], b["grad_checksum"])
        for a, b in zip(zero, one):
            self.assertNotEqual(a["batch"], b["batch"])
        for a, b in zip(kind(by_rank[0], "grads"), kind(by_rank[1], "grads")):
            self.assertEqual([g["param_sum"] for g in a["groups"]], [g["param_sum"] for g in b["groups"]])

    def test_same_batches_without_distributed_sampler(self):
        by_rank = ranks("--sampler", "none", limit=3)
        for a, b in zip(steps(by_rank[0]), steps(by_rank[1])):
            self.assertEqual(a["batch"], b["batch"])

    def test_gradients_differ_without_ddp(self):
        by_rank = ranks("--no-ddp", limit=3)
        self.assertIsNone(kind(by_rank[0], "model")[0]["wrapper"])
        zero, one = steps(by_rank[0]), steps(by_rank[1])
        for a, b in zip(zero, one):
            self.assertNotEqual(a["grad_checksum"], b["grad_checksum"])
        self.assertNotEqual(zero[-1]["param_checksum"], one[-1]["param_checksum"])
        groups = [g["grad_sum"] for g in kind(by_rank[0], "grads")[0]["groups"]], \
            [g["grad_sum"] for g in kind(by_rank[1], "grads")[0]["groups"]]
        self.assertNotEqual(groups[0][0], groups[1][0])

    def test_row_samples_disjoint_with_distributed_sampler(self):
        by_rank = default_ranks()
        epochs = {r: [e for e in kind(recs, "epoch") if e["exhausted"]] for r, recs in by_rank.items()}
        self.assertEqual([len(epochs[0]), len(epochs[1])], [2, 2])
        for a, b in zip(epochs[0], epochs[1]):
            self.assertEqual((a["row_sample_bits"], b["row_sample_bits"]), (0, 0))
            self.assertEqual((len(a["row_sample"]), len(b["row_sample"])), (64, 64))
            self.assertEqual((a["rows_fingerprinted"], b["rows_fingerprinted"]), (64, 64))
            self.assertFalse(set(a["row_sample"]) & set(b["row_sample"]))
        # The same rows in both epochs (a new order, the same shard's union: all 128 rows).
        self.assertEqual(len(set(epochs[0][0]["row_sample"]) | set(epochs[1][0]["row_sample"])), 128)

    def test_row_samples_overlap_with_sampler_seeded_per_rank(self):
        by_rank = seed_per_rank_ranks()
        a, b = (kind(by_rank[r], "epoch")[0] for r in (0, 1))
        self.assertTrue(a["exhausted"] and b["exhausted"])
        shared = set(a["row_sample"]) & set(b["row_sample"])
        self.assertGreater(len(shared), 10)  # about a quarter of 128 rows

    def test_batchnorm_statistics_per_rank(self):
        by_rank = seed_per_rank_ranks()
        zero, one = (kind(by_rank[r], "batchnorm") for r in (0, 1))
        self.assertEqual([r["step"] for r in zero][:3], [1, 2, 3])
        self.assertEqual([r["step"] for r in zero], [r["step"] for r in one])
        self.assertEqual(zero[0]["modules"][0]["name"], "1")
        self.assertEqual(zero[0]["modules"][0]["class"], "BatchNorm1d")
        self.assertNotEqual(zero[0]["modules"][0]["mean_sum"], one[0]["modules"][0]["mean_sum"])
        self.assertEqual(kind(default_ranks()[0], "batchnorm"), [])  # no BatchNorm: no record

    def test_switch_turns_the_cross_rank_probes_off(self):
        by_rank = ranks("--bn", limit=9, env={"MLDEBUG_RUN_RANKS": "0"})
        self.assertEqual(kind(by_rank[0], "batchnorm"), [])
        epoch = kind(by_rank[0], "epoch")[0]
        self.assertNotIn("row_sample", epoch)
        self.assertTrue(epoch["exhausted"])


if __name__ == "__main__":
    unittest.main()
