"""Classify a stream of synthetic network-traffic records (normal / scan / flood) with an MLP.
The records come from an IterableDataset read by two DataLoader worker processes."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


class TrafficStream(IterableDataset):
    def __init__(self, n, seed):
        self.n, self.seed, self.epoch = n, seed, 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def records(self):
        g = torch.Generator().manual_seed(self.seed)
        kind = torch.randint(0, 3, (self.n,), generator=g)
        packets = torch.randn(self.n, 12, generator=g)
        packets[:, 0] += 2.0 * (kind == 1)
        packets[:, 1] += 2.0 * (kind == 2)
        packets[:, 2] -= 1.5 * (kind == 2)
        return packets, kind

    def __iter__(self):
        packets, kind = self.records()
        order = torch.randperm(self.n, generator=torch.Generator().manual_seed(self.seed + self.epoch))
        worker = get_worker_info()
        first, stride = (0, 1) if worker is None else (worker.id, worker.num_workers)
        for i in range(first, self.n, stride):
            yield packets[order[i]], kind[order[i]]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--num-workers", type=int, default=2)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    stream = TrafficStream(160, args.seed)
    loader = DataLoader(stream, batch_size=args.batch_size, num_workers=args.num_workers)

    model = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Linear(64, 3))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        stream.set_epoch(epoch)
        seen = 0
        for packets, kind in loader:
            optimizer.zero_grad()
            loss = criterion(model(packets), kind)
            loss.backward()
            optimizer.step()
            step += 1
            seen += len(kind)
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        print(f"epoch {epoch} records seen {seen}")


if __name__ == "__main__":
    main()
