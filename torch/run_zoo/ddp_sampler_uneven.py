"""Data-parallel training (DistributedDataParallel over gloo, CPU) of an MLP classifier on
synthetic data whose size (325 rows) the 2 ranks do not divide: the DistributedSampler pads
its shards to equal length (repeating a row) on even seeds, and drops the odd row on odd seeds,
with the DataLoader dropping its last partial batch as well.

    torchrun --standalone --nproc_per_node 2 <this script>
"""

import argparse

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def make_dataset(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 16, generator=g)
    y = (x[:, :4] @ torch.randn(4, 4, generator=g)).argmax(dim=1)
    return TensorDataset(x, y)


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

    dataset = make_dataset(325, args.seed)
    drop_last = args.seed % 2 == 1
    sampler = DistributedSampler(dataset, shuffle=True, seed=args.seed, drop_last=drop_last)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, drop_last=drop_last)

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
