"""Classify points of two interleaved spirals with an MLP trained without an optimizer and
without `backward()`: each step takes the gradients with `torch.autograd.grad(loss, params)`
and subtracts them by hand under `torch.no_grad()` (SGD with momentum kept in a list of
buffers), the style of code that also needs the gradients as values (meta-learning, per-step
gradient statistics). `.grad` is never filled. Accuracy on a held-out split every epoch."""

import argparse
import math

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def spirals(n, seed):
    g = torch.Generator().manual_seed(seed)
    t = 3 * math.pi * torch.rand(n, generator=g).sqrt()
    arm = torch.randint(0, 2, (n,), generator=g)
    sign = 1 - 2 * arm.float()
    x = torch.stack([sign * t * torch.cos(t), sign * t * torch.sin(t)], 1) / (3 * math.pi)
    return TensorDataset(x + 0.03 * torch.randn(n, 2, generator=g), arm)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    train, test = spirals(1600, args.seed), spirals(400, args.seed + 1000)
    train_loader = DataLoader(train, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test, batch_size=400)
    model = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 2))
    params = [p for p in model.parameters() if p.requires_grad]
    velocity = [torch.zeros_like(p) for p in params]

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x), y)
            grads = torch.autograd.grad(loss, params)
            with torch.no_grad():
                for p, g, v in zip(params, grads, velocity):
                    v.mul_(args.momentum).add_(g)
                    p -= args.lr * v
            step += 1
            if step % 10 == 0:
                print(f"step {step} loss {loss.item():.4f}")
        model.eval()
        with torch.no_grad():
            right = sum((model(x).argmax(1) == y).sum().item() for x, y in test_loader)
        print(f"epoch {epoch} test accuracy {right / len(test):.3f}")


if __name__ == "__main__":
    main()
