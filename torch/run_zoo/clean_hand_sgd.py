"""Fit a small MLP to a noisy 1-D function with hand-written SGD (no torch.optim)."""
import argparse
import math

import torch
from torch import nn


def target(x):
    return torch.sin(3 * x) + 0.5 * x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    x = torch.rand(384, 1) * 4 - 2
    y = target(x) + 0.1 * torch.randn_like(x)
    x_test = torch.linspace(-2, 2, 200).unsqueeze(1)
    y_test = target(x_test)

    model = nn.Sequential(nn.Linear(1, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))
    lr = args.lr

    n = x.shape[0]
    steps_per_epoch = math.ceil(n / args.batch_size)
    for epoch in range(args.epochs):
        perm = torch.randperm(n)
        total = 0.0
        for b in range(steps_per_epoch):
            idx = perm[b * args.batch_size:(b + 1) * args.batch_size]
            pred = model(x[idx])
            loss = ((pred - y[idx]) ** 2).mean()
            loss.backward()
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            model.zero_grad()
            total += loss.item()
        with torch.no_grad():
            test_mse = ((model(x_test) - y_test) ** 2).mean().item()
        print(f"epoch {epoch} train mse {total / steps_per_epoch:.4f} test mse {test_mse:.4f}")


if __name__ == "__main__":
    main()
