"""Classify synthetic sensor windows (24 features, five activities) with an MLP, trained by a
small Trainer class that validates once at the end of every epoch on held-out windows."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, Subset, TensorDataset


def make_windows(n, seed):
    g = torch.Generator().manual_seed(seed)
    centres = 1.2 * torch.randn(5, 24, generator=g)
    y = torch.randint(0, 5, (n,), generator=g)
    x = centres[y] + torch.randn(n, 24, generator=g)
    return TensorDataset(x, y)


class Trainer:
    def __init__(self, model, optimizer, train_loader, val_loader, log_every=10):
        self.model, self.optimizer = model, optimizer
        self.train_loader, self.val_loader = train_loader, val_loader
        self.criterion = nn.CrossEntropyLoss()
        self.log_every = log_every
        self.global_step = 0

    def train_epoch(self, epoch):
        self.model.train()
        for xb, yb in self.train_loader:
            self.optimizer.zero_grad()
            loss = self.criterion(self.model(xb), yb)
            loss.backward()
            self.optimizer.step()
            self.global_step += 1
            if self.global_step % self.log_every == 0:
                print(f"epoch {epoch} step {self.global_step} loss {loss.item():.4f}")

    @torch.no_grad()
    def validate(self):
        self.model.eval()
        correct = total = 0
        for xb, yb in self.val_loader:
            correct += (self.model(xb).argmax(1) == yb).sum().item()
            total += len(yb)
        return correct / total

    def fit(self, epochs):
        for epoch in range(epochs):
            self.train_epoch(epoch)
            print(f"epoch {epoch} val_acc {self.validate():.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    data = make_windows(1800, args.seed)
    order = torch.randperm(len(data))
    train_set = Subset(data, order[:1500].tolist())
    val_set = Subset(data, order[1500:].tolist())
    print(f"train windows {len(train_set)} val windows {len(val_set)}")

    model = nn.Sequential(nn.Linear(24, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 5))
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    trainer = Trainer(model, optimizer,
                      DataLoader(train_set, batch_size=args.batch_size, shuffle=True),
                      DataLoader(val_set, batch_size=100))
    trainer.fit(args.epochs)


if __name__ == "__main__":
    main()
