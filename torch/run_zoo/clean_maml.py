"""MAML on sine-wave regression tasks: for each task of a meta-batch, two inner SGD steps on its
support points with `torch.autograd.grad(..., create_graph=True)` give fast weights (a dict used
through `torch.func.functional_call`), and the query loss of the adapted model is the meta-loss.
The meta-update is Adam on `meta_loss.backward()` with even seeds, and with odd seeds SGD
written by hand on `torch.autograd.grad(meta_loss, params)` (no optimizer, no backward)."""

import argparse
import math

import torch
from torch import nn
from torch.func import functional_call


def sample_task(n, g):
    amplitude = 0.1 + 4.9 * torch.rand(1, generator=g)
    phase = math.pi * torch.rand(1, generator=g)
    x = 10 * torch.rand(2 * n, 1, generator=g) - 5
    y = amplitude * torch.sin(x + phase)
    return x[:n], y[:n], x[n:], y[n:]


def adapt(model, x, y, inner_lr, steps):
    fast = dict(model.named_parameters())
    for _ in range(steps):
        loss = nn.functional.mse_loss(functional_call(model, fast, (x,)), y)
        grads = torch.autograd.grad(loss, list(fast.values()), create_graph=True)
        fast = {name: w - inner_lr * g for (name, w), g in zip(fast.items(), grads)}
    return fast


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--iterations-per-epoch", type=int, default=20)
    parser.add_argument("--meta-batch", type=int, default=4)
    parser.add_argument("--shots", type=int, default=10)
    parser.add_argument("--inner-lr", type=float, default=0.01)
    parser.add_argument("--inner-steps", type=int, default=2)
    parser.add_argument("--meta-lr", type=float, default=1e-3)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed)
    model = nn.Sequential(nn.Linear(1, 40), nn.ReLU(), nn.Linear(40, 40), nn.ReLU(), nn.Linear(40, 1))
    by_hand = args.seed % 2 == 1
    params = list(model.parameters())
    meta_opt = None if by_hand else torch.optim.Adam(params, lr=args.meta_lr)

    for it in range(1, args.epochs * args.iterations_per_epoch + 1):
        meta_loss = 0.0
        for _ in range(args.meta_batch):
            xs, ys, xq, yq = sample_task(args.shots, g)
            fast = adapt(model, xs, ys, args.inner_lr, args.inner_steps)
            meta_loss = meta_loss + nn.functional.mse_loss(functional_call(model, fast, (xq,)), yq)
        meta_loss = meta_loss / args.meta_batch
        if by_hand:
            grads = torch.autograd.grad(meta_loss, params)
            with torch.no_grad():
                for p, grad in zip(params, grads):
                    p -= 10 * args.meta_lr * grad
        else:
            meta_opt.zero_grad()
            meta_loss.backward()
            meta_opt.step()
        if it % 10 == 0:
            print(f"iteration {it} meta-loss {meta_loss.item():.4f}")
        if it % args.iterations_per_epoch == 0:
            print(f"epoch {it // args.iterations_per_epoch} done")


if __name__ == "__main__":
    main()
