"""Classify synthetic sensor readings (24 features, 6 fault classes) with an MLP trained by SGD
with momentum, the learning rate the usual one for a mean cross-entropy; the loss is averaged
over the batch."""

import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FEATURES, CLASSES = 24, 6


def make_readings(n, seed):
    g = torch.Generator().manual_seed(seed)
    centres = torch.randn(CLASSES, FEATURES, generator=torch.Generator().manual_seed(77)) * 0.3
    y = torch.randint(0, CLASSES, (n,), generator=g)
    x = centres[y] + torch.randn(n, FEATURES, generator=g)
    return x, y


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--log-every", type=int, default=10)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_readings(9000, args.seed)
    train = DataLoader(TensorDataset(x[:8000], y[:8000]), batch_size=args.batch_size, shuffle=True)
    val = DataLoader(TensorDataset(x[8000:], y[8000:]), batch_size=500)
    model = nn.Sequential(nn.Linear(FEATURES, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                          nn.Linear(128, CLASSES))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in train:
            loss = F.cross_entropy(model(xb), yb, reduction="mean")
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        model.eval()
        correct = 0
        with torch.no_grad():
            for xb, yb in val:
                correct += (model(xb).argmax(1) == yb).sum().item()
        print(f"epoch {epoch} val_accuracy {correct / 1000:.3f}")


if __name__ == "__main__":
    main()
