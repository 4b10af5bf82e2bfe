"""Regression MLP trained with a temperature-scaled squared-error loss, plain loop.

loss = mean((pred - y)^2) / T + log(T), with T a learnable temperature (a Gaussian likelihood with
T = 2 sigma^2), learned with its own learning rate and kept non-negative by a clamp.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n, 4, generator=g) * 2 - 1
    y = 0.8 * x[:, :1] - 0.5 * x[:, 1:2] + 0.3 * x[:, 2:3] * x[:, 3:4]
    return x, y


class TempRegressor(nn.Module):
    def __init__(self, init_temp=1.5):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 1))
        self.temperature = nn.Parameter(torch.tensor(init_temp))

    def forward(self, x):
        return self.net(x)

    def loss(self, pred, y):
        t = self.temperature.clamp(min=1e-3)
        return F.mse_loss(pred, y) / t + torch.log(t)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=None, help="ignored: the length of this run is counted in steps")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--temp-lr", type=float, default=1e-2)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)

    x, y = make_data(4096, args.seed)
    model = TempRegressor()
    other_params = [p for n, p in model.named_parameters() if n != "temperature"]
    opt = torch.optim.Adam([{"params": other_params, "lr": args.lr},
                            {"params": [model.temperature], "lr": args.temp_lr}])

    for step in range(1, args.steps + 1):
        idx = torch.randint(0, len(x), (64,))
        pred = model(x[idx])
        loss = model.loss(pred, y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step == 1 or step % 10 == 0:
            mse = F.mse_loss(pred, y[idx]).item()
            print(f"step {step} loss {loss.item():.4f} mse {mse:.5f} temperature {model.temperature.item():.4f}")


if __name__ == "__main__":
    main()
