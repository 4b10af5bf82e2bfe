"""Classify synthetic 12x12 images (four textures: horizontal, vertical and diagonal stripes,
checkerboard) with a small CNN with batch normalisation."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_textures(n, seed):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 4, (n,), generator=g)
    r = torch.arange(12).view(12, 1).float()
    c = torch.arange(12).view(1, 12).float()
    patterns = torch.stack([
        torch.sin(r * 1.6).expand(12, 12),
        torch.sin(c * 1.6).expand(12, 12),
        torch.sin((r + c) * 1.1),
        torch.sign(torch.sin(r * 1.6) * torch.sin(c * 1.6)),
    ])
    x = patterns[y] + 0.8 * torch.randn(n, 12, 12, generator=g)
    return x.unsqueeze(1), y


class TextureNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Linear(32, 4)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def evaluate(model, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for xb, yb in loader:
            correct += (model(xb).argmax(1) == yb).sum().item()
    return correct / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_textures(448, args.seed)
    train_loader = DataLoader(TensorDataset(x[:320], y[:320]), batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(TensorDataset(x[320:], y[320:]), batch_size=16)

    model = TextureNet()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        bn = model.features[1]
        print(f"epoch {epoch} val_acc {evaluate(model, val_loader):.3f} "
              f"bn batches tracked {bn.num_batches_tracked.item()}")


if __name__ == "__main__":
    main()
