"""Tabular classifier (BatchNorm + Dropout 0.3) written Lightning style, with a minimal Trainer that
runs validation every `val_check_interval` training steps."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 30, generator=g) * torch.linspace(0.5, 3.0, 30) + 1.0
    w = torch.randn(30, 4, generator=torch.Generator().manual_seed(3))
    y = (torch.tanh(x) @ w).argmax(1)
    return x, y


class LitTabular(nn.Module):
    def __init__(self, lr=3e-3):
        super().__init__()
        self.lr = lr
        self.net = nn.Sequential(
            nn.Linear(30, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Dropout(0.3),
            nn.Linear(128, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Dropout(0.3),
            nn.Linear(128, 4))

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        return F.cross_entropy(logits, y, reduction="sum").item(), (logits.argmax(1) == y).sum().item(), len(y)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr, weight_decay=1e-2)


class Trainer:
    def __init__(self, max_steps, val_check_interval=50, log_every=10):
        self.max_steps = max_steps
        self.val_check_interval = val_check_interval
        self.log_every = log_every
        self.global_step = 0

    @torch.no_grad()
    def run_validation(self, module, val_loader):
        module.eval()
        outs = [module.validation_step(b, i) for i, b in enumerate(val_loader)]
        module.train()
        n = sum(o[2] for o in outs)
        print(f"step {self.global_step} val_loss {sum(o[0] for o in outs) / n:.4f} "
              f"val_acc {sum(o[1] for o in outs) / n:.3f}")

    def fit(self, module, train_loader, val_loader):
        opt = module.configure_optimizers()
        module.train()
        while self.global_step < self.max_steps:
            for i, batch in enumerate(train_loader):
                loss = module.training_step(batch, i)
                opt.zero_grad()
                loss.backward()
                opt.step()
                self.global_step += 1
                if self.global_step % self.log_every == 0:
                    print(f"step {self.global_step} loss {loss.item():.4f}")
                if self.global_step % self.val_check_interval == 0:
                    self.run_validation(module, val_loader)
                if self.global_step >= self.max_steps:
                    break


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=None, help="ignored: the length of this run is counted in steps")
    parser.add_argument("--max-steps", type=int, default=200)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    x, y = make_data(2048, args.seed)
    xv, yv = make_data(512, args.seed + 1)
    train_loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True, drop_last=True)
    val_loader = DataLoader(TensorDataset(xv, yv), batch_size=16)
    Trainer(args.max_steps).fit(LitTabular(), train_loader, val_loader)


if __name__ == "__main__":
    main()
