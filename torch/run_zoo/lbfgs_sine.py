"""Predict the next sample of noisy sine waves with a two-layer LSTM-cell network trained by
L-BFGS: each optimizer step calls a closure that runs the forward and the backward itself, and
the model is first built inside that closure's forward (no forward before the first step)."""

import argparse
import math

import torch
from torch import nn


def make_waves(n, length, seed):
    g = torch.Generator().manual_seed(seed)
    phase = torch.rand(n, 1, generator=g) * 2 * math.pi
    period = 16 + 8 * torch.rand(n, 1, generator=g)
    t = torch.arange(length, dtype=torch.float32).unsqueeze(0)
    return torch.sin(2 * math.pi * t / period + phase) + 0.02 * torch.randn(n, length, generator=g)


class Sequence(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.hidden = hidden
        self.cell1 = nn.LSTMCell(1, hidden)
        self.cell2 = nn.LSTMCell(hidden, hidden)
        self.head = nn.Linear(hidden, 1)

    def forward(self, series, future=0):
        batch = series.size(0)
        h1 = c1 = h2 = c2 = series.new_zeros(batch, self.hidden)
        outputs = []
        out = None
        for x in series.split(1, dim=1):
            h1, c1 = self.cell1(x, (h1, c1))
            h2, c2 = self.cell2(h1, (h2, c2))
            out = self.head(h2)
            outputs.append(out)
        for _ in range(future):
            h1, c1 = self.cell1(out, (h1, c1))
            h2, c2 = self.cell2(h1, (h2, c2))
            out = self.head(h2)
            outputs.append(out)
        return torch.cat(outputs, dim=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=12, help="full-batch L-BFGS steps")
    parser.add_argument("--hidden", type=int, default=16)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    waves = make_waves(40, 48, args.seed)
    train_x, train_y = waves[4:, :-1], waves[4:, 1:]
    test_x, test_y = waves[:4, :-1], waves[:4, 1:]
    model = Sequence(args.hidden)
    loss_fn = nn.MSELoss()
    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=6)

    for step in range(args.epochs):
        def closure():
            optimizer.zero_grad()
            loss = loss_fn(model(train_x), train_y)
            loss.backward()
            return loss

        loss = optimizer.step(closure)
        with torch.no_grad():
            test_loss = loss_fn(model(test_x, future=0), test_y)
        print(f"step {step} train loss {loss.item():.5f} test loss {test_loss.item():.5f}")


if __name__ == "__main__":
    main()
