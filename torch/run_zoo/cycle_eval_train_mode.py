"""Classify synthetic tabular records (16 features, three classes) with a Lightning-style module
(training_step, validation_step, configure_optimizers) run by a small fit loop that validates
every 50 steps."""

import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_records(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 16, generator=g)
    score = x[:, 0] * x[:, 1] + 0.8 * x[:, 2] - 0.5 * x[:, 3] + 0.3 * torch.randn(n, generator=g)
    return TensorDataset(x, torch.bucketize(score, torch.tensor([-0.5, 0.5])))


class LitTabular(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.lr = lr
        self.net = nn.Sequential(
            nn.Linear(16, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Dropout(0.3),
            nn.Linear(128, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Dropout(0.3),
            nn.Linear(128, 3),
        )

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return (self(x).argmax(1) == y).sum().item(), len(y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr, momentum=0.9)


def validate(module, loader):
    correct = total = 0
    with torch.no_grad():
        for i, batch in enumerate(loader):
            c, n = module.validation_step(batch, i)
            correct, total = correct + c, total + n
    return correct / total


def fit(module, train_loader, val_loader, epochs, val_every):
    optimizer = module.configure_optimizers()
    step = 0
    for epoch in range(epochs):
        module.train()
        for i, batch in enumerate(train_loader):
            loss = module.training_step(batch, i)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % val_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} "
                      f"val_acc {validate(module, val_loader):.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--val-every", type=int, default=50)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    data = make_records(2800, args.seed)
    train_set, val_set = torch.utils.data.random_split(
        data, [2400, 400], generator=torch.Generator().manual_seed(args.seed))
    fit(LitTabular(args.lr), DataLoader(train_set, batch_size=args.batch_size, shuffle=True),
        DataLoader(val_set, batch_size=100), args.epochs, args.val_every)


if __name__ == "__main__":
    main()
