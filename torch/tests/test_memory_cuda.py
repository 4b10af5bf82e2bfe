"""The CUDA memory measurement's largest forward block, from synthetic allocator histories (no
GPU needed): a block the forward pass allocates and the step gives back counts; a library
workspace allocated at the first matmul and kept for the process does not; nor does a block
allocated after the forward pass.

    python -m unittest test_memory_cuda     (from torch/tests)
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "driver"))

from mldebug_driver.checks.memory import CudaAllocations  # noqa: E402

MIB = 1 << 20


def history(*events):
    return [{"action": a, "addr": addr, "size": size} for a, addr, size in events]


class LargestTransientBlock(unittest.TestCase):
    def allocations(self, on=True):
        a = CudaAllocations.__new__(CudaAllocations)
        a.on = on
        return a

    def test_a_workspace_kept_for_the_process_is_not_an_intermediate(self):
        events = history(
            ("alloc", 1, 32 * MIB),        # cuBLAS workspace, never given back
            ("alloc", 2, 1 * MIB),         # activation kept for backward
            ("alloc", 3, 2 * MIB),         # an intermediate, freed in forward
            ("free_requested", 3, 2 * MIB),
            # forward ends here (index 4)
            ("alloc", 4, 8 * MIB),         # a gradient, after forward
            ("free_requested", 2, 1 * MIB),
            ("free_requested", 4, 8 * MIB),
        )
        self.assertEqual(self.allocations().largest_transient(0, 4, events), 2 * MIB)

    def test_only_the_stretch_from_start_counts(self):
        events = history(
            ("alloc", 7, 64 * MIB),
            ("free_requested", 7, 64 * MIB),
            ("alloc", 8, 3 * MIB),
            ("free_completed", 8, 3 * MIB),
        )
        self.assertEqual(self.allocations().largest_transient(2, 4, events), 3 * MIB)

    def test_an_address_reused_after_its_free_is_a_new_block(self):
        events = history(
            ("alloc", 5, 4 * MIB),
            ("free_requested", 5, 4 * MIB),
            ("alloc", 5, 16 * MIB),        # same address, kept
        )
        self.assertEqual(self.allocations().largest_transient(0, 3, events), 4 * MIB)

    def test_without_the_allocator_history_nothing_is_claimed(self):
        events = history(("alloc", 1, MIB), ("free_requested", 1, MIB))
        self.assertEqual(self.allocations(on=False).largest_transient(0, 2, events), 0.0)


class WarmUp(unittest.TestCase):
    """The warm-up before the CUDA baseline (library workspaces allocated there, not in step 1)
    runs the model's forward and backward once and leaves the measured model unchanged: the
    same seed still builds the same weights. On a GPU, torch/bench/gpu_checks.sh checks that
    a clean model then shows no second-batch spike."""

    def test_a_forward_and_a_backward_and_the_same_weights_after(self):
        import torch

        from mldebug_driver.checks.memory import warm_up
        from mldebug_driver.rng import seed_all

        calls = []

        class Subject:
            def build(self):
                return torch.nn.Linear(4, 3)

            def batch(self, seed, device):
                g = torch.Generator().manual_seed(seed)
                return torch.randn(5, 4, generator=g), torch.randint(0, 3, (5,), generator=g)

            def loss(self, output, targets):
                calls.append(output.requires_grad)
                return torch.nn.functional.cross_entropy(output, targets)

        class Run:
            seed, device, subject = 3, torch.device("cpu"), Subject()

        seed_all(3)
        before = Subject().build().weight.detach().clone()
        warm_up(Run())
        self.assertEqual(calls, [True])
        seed_all(3)
        self.assertTrue(torch.equal(Subject().build().weight, before))


if __name__ == "__main__":
    unittest.main()
