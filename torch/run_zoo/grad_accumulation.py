"""Classify synthetic points into five classes with gradient accumulation: micro-batches of 8,
four backward passes per optimizer step (an effective batch of 32)."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_blobs(n, classes, dim, seed):
    g = torch.Generator().manual_seed(seed)
    centers = 3 * torch.randn(classes, dim, generator=g)
    y = torch.randint(0, classes, (n,), generator=g)
    x = centers[y] + torch.randn(n, dim, generator=g)
    return x / 3, y


class Classifier(nn.Module):
    def __init__(self, dim, hidden, classes):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU())
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.head(self.body(x))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--accumulation-steps", type=int, default=4)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_blobs(384, 5, 16, args.seed)
    train_loader = DataLoader(TensorDataset(x[:320], y[:320]), batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(TensorDataset(x[320:], y[320:]), batch_size=64)

    model = Classifier(16, 64, 5)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    optimizer.zero_grad()
    for epoch in range(args.epochs):
        model.train()
        running = 0.0
        for i, (xb, yb) in enumerate(train_loader):
            loss = criterion(model(xb), yb) / args.accumulation_steps
            loss.backward()
            running += loss.item()
            if (i + 1) % args.accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
                step += 1
                if step % args.log_every == 0:
                    print(f"epoch {epoch} step {step} loss {running:.4f}")
                running = 0.0
        model.eval()
        correct = 0
        with torch.no_grad():
            for xb, yb in val_loader:
                correct += (model(xb).argmax(dim=1) == yb).sum().item()
        print(f"epoch {epoch} val_acc {correct / len(val_loader.dataset):.3f}")


if __name__ == "__main__":
    main()
