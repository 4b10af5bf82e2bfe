"""Classify synthetic 16x16 glyph images (8 classes) with a small ConvNet; the loop keeps each
step's loss to report the epoch's mean loss at the end of the epoch."""

import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

CLASSES, SIDE = 8, 16


def make_glyphs(n, seed):
    """Each class is a fixed random stroke pattern, shifted by up to two pixels, plus noise."""
    patterns = (torch.rand(CLASSES, SIDE, SIDE, generator=torch.Generator().manual_seed(5)) > 0.7).float()
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, CLASSES, (n,), generator=g)
    shifts = torch.randint(-2, 3, (n, 2), generator=g)
    x = torch.stack([torch.roll(patterns[c], (int(a), int(b)), dims=(0, 1)) for c, (a, b) in zip(y, shifts)])
    x = x + 0.4 * torch.randn(n, SIDE, SIDE, generator=g)
    return x.unsqueeze(1), y


class GlyphNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.head = nn.Linear(32 * 4 * 4, CLASSES)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.head(x.flatten(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_glyphs(2400, args.seed)
    train = DataLoader(TensorDataset(x[:2000], y[:2000]), batch_size=args.batch_size, shuffle=True)
    val = DataLoader(TensorDataset(x[2000:], y[2000:]), batch_size=200)
    model = GlyphNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        model.train()
        step_losses = []
        for xb, yb in train:
            loss = F.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step_losses.append(loss)
        train_loss = torch.stack(step_losses).mean().item()
        model.eval()
        with torch.no_grad():
            correct = sum((model(xb).argmax(1) == yb).sum().item() for xb, yb in val)
        print(f"epoch {epoch} train_loss {train_loss:.4f} val_accuracy {correct / 400:.3f}")


if __name__ == "__main__":
    main()
