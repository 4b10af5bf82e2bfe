"""Classify synthetic "encoded" records (each stored as bytes that must be decoded into a
feature vector) with a small MLP."""

import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

DECODE_SECONDS = 0.003


def decode(blob):
    """Stands in for an expensive decoder (JPEG, audio, JSON parsing)."""
    time.sleep(DECODE_SECONDS)
    return torch.frombuffer(bytearray(blob), dtype=torch.float32).clone()


class EncodedRecords(Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        features = torch.randn(n, 16, generator=g)
        self.labels = (features[:, 0] + features[:, 1] > 0).long()
        self.blobs = [row.numpy().tobytes() for row in features]

    def __len__(self):
        return len(self.blobs)

    def __getitem__(self, i):
        return decode(self.blobs[i]), self.labels[i]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    loader = DataLoader(EncodedRecords(320, args.seed), batch_size=args.batch_size, shuffle=True)

    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    started = time.perf_counter()
    for epoch in range(args.epochs):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                rate = step / (time.perf_counter() - started)
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} ({rate:.1f} steps/s)")


if __name__ == "__main__":
    main()
