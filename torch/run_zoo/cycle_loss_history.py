"""Regress synthetic house prices (40 features) with an MLP, trained by a hand-written Runner
class that keeps the epoch's losses for its end-of-epoch summary and validates after each
epoch."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_houses(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 40, generator=g)
    w = torch.randn(40, generator=g) / 6
    price = x @ w + 0.3 * torch.tanh(x[:, 0] * x[:, 1]) + 0.1 * torch.randn(n, generator=g)
    return x, price.unsqueeze(1)


class Runner:
    def __init__(self, model, optimizer, log_every=25):
        self.model, self.optimizer = model, optimizer
        self.criterion = nn.MSELoss()
        self.log_every = log_every
        self.global_step = 0
        self.epoch_losses = []

    def training_step(self, xb, yb):
        loss = self.criterion(self.model(xb), yb)
        self.optimizer.zero_grad()
        loss.backward(retain_graph=True)
        self.optimizer.step()
        self.epoch_losses.append(loss)
        self.global_step += 1
        if self.global_step % self.log_every == 0:
            print(f"step {self.global_step} loss {loss.item():.4f}")

    def end_epoch(self, epoch, val_loader):
        mean = torch.stack([torch.as_tensor(v) for v in self.epoch_losses]).mean().item()
        self.epoch_losses = []
        self.model.eval()
        with torch.no_grad():
            val = sum(self.criterion(self.model(xb), yb).item() for xb, yb in val_loader) / len(val_loader)
        self.model.train()
        print(f"epoch {epoch} train_mse {mean:.4f} val_mse {val:.4f}")

    def run(self, train_loader, val_loader, epochs):
        for epoch in range(epochs):
            for xb, yb in train_loader:
                self.training_step(xb, yb)
            self.end_epoch(epoch, val_loader)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--width", type=int, default=512)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_houses(27000, args.seed)
    train_loader = DataLoader(TensorDataset(x[:25600], y[:25600]), batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(TensorDataset(x[25600:], y[25600:]), batch_size=700)
    w = args.width
    model = nn.Sequential(nn.Linear(40, w), nn.ReLU(), nn.Linear(w, w), nn.ReLU(), nn.Linear(w, 1))
    Runner(model, torch.optim.Adam(model.parameters(), lr=args.lr)).run(train_loader, val_loader, args.epochs)


if __name__ == "__main__":
    main()
