"""Classify synthetic sensor readings with an MLP; report how far training moved the weights
from their initial values."""

import argparse
import copy

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_readings(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 12, generator=g)
    score = x[:, 0] * x[:, 1] + x[:, 2] - 0.5 * x[:, 3] ** 2
    y = torch.bucketize(score, torch.tensor([-1.0, 0.0, 1.0]))
    return x, y


def weight_distance(a, b):
    return sum((p - q).norm().item() for p, q in zip(a.parameters(), b.parameters()))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_readings(448, args.seed)
    train_loader = DataLoader(TensorDataset(x[:320], y[:320]), batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(TensorDataset(x[320:], y[320:]), batch_size=128)

    model = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))
    initial = copy.deepcopy(model)
    optimizer = torch.optim.Adam(initial.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        model.eval()
        with torch.no_grad():
            correct = sum((model(xb).argmax(1) == yb).sum().item() for xb, yb in val_loader)
        print(f"epoch {epoch} val_acc {correct / 128:.3f} "
              f"weight distance from init {weight_distance(model, initial):.4f}")


if __name__ == "__main__":
    main()
