"""Regress a price from synthetic house features with an MLP and SGD with momentum."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_houses(n, seed):
    g = torch.Generator().manual_seed(seed)
    rooms = torch.randint(1, 7, (n, 1), generator=g).float()
    area = 40 + 30 * rooms + 10 * torch.randn(n, 1, generator=g)
    age = 50 * torch.rand(n, 1, generator=g)
    distance = 20 * torch.rand(n, 1, generator=g)
    price = 1.5 * area + 8 * rooms - 0.6 * age - 2.0 * distance + 5 * torch.randn(n, 1, generator=g)
    x = torch.cat([rooms, area, age, distance], dim=1)
    x = (x - x.mean(dim=0)) / x.std(dim=0)
    y = (price - price.mean()) / price.std()
    return x, y


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.02)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_houses(400, args.seed)
    train_loader = DataLoader(TensorDataset(x[:320], y[:320]), batch_size=args.batch_size, shuffle=True)
    x_val, y_val = x[320:], y[320:]

    model = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    loss_fn = nn.MSELoss()

    step = 0
    for epoch in range(args.epochs):
        for features, target in train_loader:
            loss = loss_fn(model(features), target)
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} mse {loss.item():.4f}")
        with torch.no_grad():
            val_mse = loss_fn(model(x_val), y_val).item()
        print(f"epoch {epoch} val_mse {val_mse:.4f}")


if __name__ == "__main__":
    main()
