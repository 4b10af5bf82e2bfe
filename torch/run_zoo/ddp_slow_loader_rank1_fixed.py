"""Data-parallel training (DistributedDataParallel over gloo, CPU) of an MLP classifier on
synthetic "encoded" records, each rank reading its own shard through a DistributedSampler.
Decoding is expensive, so records are decoded once ahead of time into a cache; the cache is
built on every rank.

    torchrun --standalone --nproc_per_node 2 <this script>
"""

import argparse
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

DECODE_SECONDS = 0.003


def decode(blob):
    """Stands in for an expensive decoder (JPEG, audio, JSON parsing)."""
    time.sleep(DECODE_SECONDS)
    return torch.frombuffer(bytearray(blob), dtype=torch.float32).clone()


class EncodedRecords(Dataset):
    def __init__(self, x, y, cached):
        self.blobs = [row.numpy().tobytes() for row in x]
        self.labels = y
        self.cache = [decode(b) for b in self.blobs] if cached else None

    def __len__(self):
        return len(self.blobs)

    def __getitem__(self, i):
        row = self.cache[i] if self.cache is not None else decode(self.blobs[i])
        return row, self.labels[i]


def make_dataset(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 16, generator=g)
    y = (x[:, :4] @ torch.randn(4, 4, generator=g)).argmax(dim=1)
    return x, y


def build_model():
    return nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(args.seed)

    dataset = EncodedRecords(*make_dataset(320, args.seed), cached=True)
    sampler = DistributedSampler(dataset, shuffle=True, seed=args.seed)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)

    model = DDP(build_model())
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            step += 1
            if rank == 0 and step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
