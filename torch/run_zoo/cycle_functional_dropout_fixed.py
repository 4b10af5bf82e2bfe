"""Classify synthetic 8x8 glyphs (ten classes) with a small residual MLP that uses functional
dropout between its blocks; evaluated every 40 steps."""

import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_glyphs(n, seed):
    g = torch.Generator().manual_seed(seed)
    templates = (torch.rand(10, 64, generator=g) > 0.5).float()
    y = torch.randint(0, 10, (n,), generator=g)
    flips = (torch.rand(n, 64, generator=g) < 0.1).float()
    return (templates[y] - flips).abs(), y


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(width, width), nn.Linear(width, width)

    def forward(self, x):
        return x + self.fc2(F.relu(self.fc1(x)))


class GlyphNet(nn.Module):
    def __init__(self, width=96, p=0.2):
        super().__init__()
        self.p = p
        self.inp = nn.Linear(64, width)
        self.blocks = nn.ModuleList([Block(width), Block(width)])
        self.head = nn.Linear(width, 10)

    def forward(self, x):
        h = F.relu(self.inp(x))
        for block in self.blocks:
            h = F.dropout(block(h), p=self.p, training=self.training)
        return self.head(h)


def evaluate(model, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for xb, yb in loader:
            correct += (model(xb).argmax(1) == yb).sum().item()
    model.train()
    return correct / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--eval-every", type=int, default=40)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_glyphs(2300, args.seed)
    train_loader = DataLoader(TensorDataset(x[:1920], y[:1920]), batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(TensorDataset(x[1920:], y[1920:]), batch_size=95)

    model = GlyphNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    step = 0
    for epoch in range(args.epochs):
        for xb, yb in train_loader:
            loss = F.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.eval_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} "
                      f"val_acc {evaluate(model, val_loader):.3f}")


if __name__ == "__main__":
    main()
