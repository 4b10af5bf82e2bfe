"""Predict whether a customer churns from 16 tabular features with an MLP trained by Adam."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_customers(n, features, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=g)
    w = torch.randn(features, generator=g)
    logit = x @ w / features ** 0.5 + 0.5 * x[:, 0] * x[:, 1]
    y = (logit + 0.3 * torch.randn(n, generator=g) > 0).long()
    return x, y


class ChurnNet(nn.Module):
    def __init__(self, features, hidden):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
        )
        self.head = nn.Linear(hidden, 2)

    def forward(self, x):
        return self.head(self.body(x))


@torch.no_grad()
def accuracy(model, loader):
    model.eval()
    correct, seen = 0, 0
    for x, y in loader:
        correct += (model(x).argmax(dim=1) == y).sum().item()
        seen += len(y)
    model.train()
    return correct / seen


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_customers(512, 16, args.seed)
    train_loader = DataLoader(TensorDataset(x[:384], y[:384]), batch_size=args.batch_size,
                              shuffle=True)
    val_loader = DataLoader(TensorDataset(x[384:], y[384:]), batch_size=128)

    model = ChurnNet(16, args.hidden)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        for xb, yb in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        print(f"epoch {epoch} val_acc {accuracy(model, val_loader):.3f}")


if __name__ == "__main__":
    main()
