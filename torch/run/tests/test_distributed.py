"""Two ranks under torchrun (gloo, CPU): each writes its own trace (the launcher none), ranks
and world size are recorded, DDP keeps parameter and gradient checksums equal across ranks
while each rank sees its own batches; without a DistributedSampler the ranks see the same
batches; without DDP the gradients differ.

    python -m unittest discover -s torch/run/tests -t torch/run/tests -p test_distributed.py
"""

import unittest

from runner import fixture, has, kind, run, steps

TORCHRUN = ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]


def ranks(*args, limit=5):
    result = run([fixture("ddp.py"), *args], steps=limit, flags=TORCHRUN)
    assert result.rc == 0, result.stderr
    assert len(result.traces) == 2, result.stderr
    by_rank = {}
    for records in result.traces.values():
        by_rank[kind(records, "dist")[0]["rank"]] = records
    return by_rank


def distributed_ok():
    if not has("torch"):
        return False
    import torch.distributed

    return torch.distributed.is_available() and torch.distributed.is_gloo_available()


@unittest.skipUnless(distributed_ok(), "needs torch.distributed with gloo")
class TwoRanks(unittest.TestCase):
    def test_ddp_with_distributed_sampler(self):
        by_rank = ranks()
        self.assertEqual(sorted(by_rank), [0, 1])
        for rank, records in by_rank.items():
            start = records[0]
            self.assertEqual((start["rank"], start["world_size"], start["local_rank"]), (rank, 2, rank))
            self.assertEqual(kind(records, "model")[0]["wrapper"], "DistributedDataParallel")
            self.assertTrue(kind(records, "loader")[0]["distributed"])
            self.assertEqual((records[-1]["reason"], records[-1]["steps"]), ("steps", 5))
        zero, one = steps(by_rank[0]), steps(by_rank[1])
        self.assertEqual(len(zero), 5)
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


if __name__ == "__main__":
    unittest.main()
