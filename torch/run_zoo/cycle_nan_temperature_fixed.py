"""Classify synthetic spectra (32 bins, six materials) with an MLP whose logits are sharpened by
a temperature annealed linearly over the first epoch; validation after each epoch."""

import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_spectra(n, seed):
    g = torch.Generator().manual_seed(seed)
    peaks = torch.randint(0, 32, (6, 3), generator=g)
    y = torch.randint(0, 6, (n,), generator=g)
    x = 0.3 * torch.randn(n, 32, generator=g)
    for k in range(3):
        x[torch.arange(n), peaks[y, k]] += 1.0
    return x, y


def temperature(step, anneal_steps):
    """1.0 at the first step, down to the floor at the end of the annealing."""
    return max(0.05, 1.0 - step / anneal_steps)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--anneal-steps", type=int, default=116)
    parser.add_argument("--log-every", type=int, default=20)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_spectra(5600, args.seed)
    train_loader = DataLoader(TensorDataset(x[:4800], y[:4800]), batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(TensorDataset(x[4800:], y[4800:]), batch_size=200)

    model = nn.Sequential(nn.Linear(32, 96), nn.GELU(), nn.Linear(96, 6))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in train_loader:
            t = temperature(step, args.anneal_steps)
            loss = F.cross_entropy(model(xb) / t, yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} temperature {t:.3f} loss {loss.item():.4f}")
        model.eval()
        with torch.no_grad():
            acc = sum((model(xb).argmax(1) == yb).sum().item() for xb, yb in val_loader) / 800
        print(f"epoch {epoch} val_acc {acc:.3f}")


if __name__ == "__main__":
    main()
