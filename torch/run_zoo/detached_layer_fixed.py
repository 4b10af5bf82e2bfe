"""Classify synthetic 2-D points (concentric rings, three classes) with a residual MLP that keeps
its first block's output for logging activation statistics."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_rings(n, seed):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 3, (n,), generator=g)
    angle = 6.2832 * torch.rand(n, generator=g)
    radius = 1.0 + y.float() + 0.25 * torch.randn(n, generator=g)
    return torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], dim=1) / 2, y


class RingNet(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(2, hidden), nn.ReLU())
        self.block1 = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU())
        self.block2 = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, 3)
        self.last_activation = None

    def forward(self, x):
        h = self.stem(x)
        h = h + self.block1(h)
        self.last_activation = h.detach()
        h = h + self.block2(h)
        return self.head(h)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_rings(448, args.seed)
    loader = DataLoader(TensorDataset(x[:320], y[:320]), batch_size=args.batch_size, shuffle=True)
    val_x, val_y = x[320:], y[320:]

    model = RingNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                act = model.last_activation
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} "
                      f"block1 mean {act.mean().item():.3f} dead {(act == 0).float().mean().item():.2f}")
        model.eval()
        with torch.no_grad():
            acc = (model(val_x).argmax(1) == val_y).float().mean().item()
        print(f"epoch {epoch} val_acc {acc:.3f}")


if __name__ == "__main__":
    main()
