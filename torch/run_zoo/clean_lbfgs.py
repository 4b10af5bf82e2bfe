"""Full-batch L-BFGS on a small nonlinear regression problem.

L-BFGS needs the loss several times per step (line search, curvature pairs), so the step takes
a closure that clears the gradients, recomputes the loss and calls backward.
"""

import argparse

import torch
from torch import nn


def make_problem(seed, n=256):
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n, 2, generator=g) * 4 - 2
    y = torch.sin(x[:, :1]) * torch.cos(x[:, 1:]) + 0.1 * x[:, :1] ** 2
    y = y + 0.02 * torch.randn(n, 1, generator=g)
    return x, y


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=12, help="outer L-BFGS steps")
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--max-iter", type=int, default=10)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_problem(args.seed)
    x_val, y_val = make_problem(args.seed + 1, n=128)

    model = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
    optimizer = torch.optim.LBFGS(model.parameters(), lr=args.lr, max_iter=args.max_iter,
                                  history_size=10, line_search_fn="strong_wolfe")
    mse = nn.MSELoss()

    evaluations = 0

    def closure():
        nonlocal evaluations
        optimizer.zero_grad()
        loss = mse(model(x), y)
        loss.backward()
        evaluations += 1
        return loss

    for epoch in range(args.epochs):
        loss = optimizer.step(closure)
        with torch.no_grad():
            val = mse(model(x_val), y_val).item()
        print(f"step {epoch:2d}  loss {loss.item():.6f}  val_mse {val:.6f}  evaluations {evaluations}")


if __name__ == "__main__":
    main()
