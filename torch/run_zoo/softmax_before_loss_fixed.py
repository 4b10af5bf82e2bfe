"""Classify synthetic points in six angular sectors with an MLP trained with nn.CrossEntropyLoss."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

CLASSES = 6


def make_points(n, seed):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, CLASSES, (n,), generator=g)
    angle = y.float() * (6.2832 / CLASSES) + 0.4 * torch.randn(n, generator=g)
    radius = 1 + 0.2 * torch.randn(n, generator=g)
    x = torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], dim=1)
    return torch.cat([x, 0.5 * torch.randn(n, 6, generator=g)], dim=1), y


def build_model(hidden):
    return nn.Sequential(
        nn.Linear(8, hidden),
        nn.ReLU(),
        nn.Linear(hidden, hidden),
        nn.ReLU(),
        nn.Linear(hidden, CLASSES),
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_points(448, args.seed)
    train_loader = DataLoader(TensorDataset(x[:320], y[:320]), batch_size=args.batch_size, shuffle=True)
    val_x, val_y = x[320:], y[320:]

    model = build_model(args.hidden)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
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
            val_loss = criterion(model(val_x), val_y).item()
            acc = (model(val_x).argmax(1) == val_y).float().mean().item()
        print(f"epoch {epoch} val_loss {val_loss:.4f} val_acc {acc:.3f}")


if __name__ == "__main__":
    main()
