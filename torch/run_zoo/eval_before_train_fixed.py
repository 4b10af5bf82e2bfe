"""Classify synthetic customer records (churn: three classes) with a dropout-regularised MLP;
the untrained model is evaluated first for a baseline."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_customers(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 16, generator=g)
    logits = x[:, :3] @ torch.tensor([[1.0, -0.5, 0.2], [0.3, 1.0, -0.7], [-0.4, 0.2, 1.0]])
    y = (logits + 0.5 * torch.randn(n, 3, generator=g)).argmax(dim=1)
    return x, y


class ChurnModel(nn.Module):
    def __init__(self, hidden=128, dropout=0.3):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(16, hidden), nn.ReLU(), nn.Dropout(dropout),
            nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(dropout),
            nn.Linear(hidden, 3),
        )

    def forward(self, x):
        return self.net(x)


def evaluate(model, loader, criterion):
    model.eval()
    loss, correct = 0.0, 0
    with torch.no_grad():
        for xb, yb in loader:
            logits = model(xb)
            loss += criterion(logits, yb).item() * len(yb)
            correct += (logits.argmax(1) == yb).sum().item()
    return loss / len(loader.dataset), correct / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_customers(448, args.seed)
    train_loader = DataLoader(TensorDataset(x[:320], y[:320]), batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(TensorDataset(x[320:], y[320:]), batch_size=64)

    model = ChurnModel()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    val_loss, val_acc = evaluate(model, val_loader, criterion)
    print(f"baseline val_loss {val_loss:.4f} val_acc {val_acc:.3f}")

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
        val_loss, val_acc = evaluate(model, val_loader, criterion)
        print(f"epoch {epoch} val_loss {val_loss:.4f} val_acc {val_acc:.3f}")


if __name__ == "__main__":
    main()
