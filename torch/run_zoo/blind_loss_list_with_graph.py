"""Small 1-D conv net classifying synthetic waveforms, written Lightning style: a LightningModule-like
class (training_step / validation_step / configure_optimizers) driven by a minimal Trainer. The
module keeps a running history of training losses for smoothed logging."""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def waveforms(n, seed, length=64):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 3, (n,), generator=g)
    t = torch.linspace(0, 2 * math.pi, length)
    freq = (y.float() + 1.0)[:, None] * 2.0
    phase = torch.rand(n, 1, generator=g) * 2 * math.pi
    x = torch.sin(freq * t + phase) + 0.6 * torch.randn(n, length, generator=g)
    return x[:, None, :], y


class WaveNetLit(nn.Module):
    def __init__(self, lr=2e-3):
        super().__init__()
        self.lr = lr
        self.net = nn.Sequential(
            nn.Conv1d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool1d(2),
            nn.Conv1d(16, 32, 5, padding=2), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(),
            nn.Linear(32, 3))
        self.train_losses = []

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.train_losses.append(loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return (self(x).argmax(1) == y).float().sum().item(), len(y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


class Trainer:
    def __init__(self, max_epochs, log_every=20):
        self.max_epochs = max_epochs
        self.log_every = log_every
        self.global_step = 0

    def fit(self, module, train_loader, val_loader):
        opt = module.configure_optimizers()
        for epoch in range(self.max_epochs):
            module.train()
            for i, batch in enumerate(train_loader):
                loss = module.training_step(batch, i)
                opt.zero_grad()
                loss.backward()
                opt.step()
                self.global_step += 1
                if self.global_step % self.log_every == 0:
                    window = module.train_losses[-self.log_every:]
                    avg = sum(window) / len(window)
                    print(f"epoch {epoch} step {self.global_step} avg_loss {avg:.4f}")
            module.eval()
            with torch.no_grad():
                res = [module.validation_step(b, i) for i, b in enumerate(val_loader)]
            print(f"epoch {epoch} val_acc {sum(r[0] for r in res) / sum(r[1] for r in res):.3f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    x, y = waveforms(1280, args.seed)
    xv, yv = waveforms(256, args.seed + 1)
    train_loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    val_loader = DataLoader(TensorDataset(xv, yv), batch_size=128)
    Trainer(args.epochs).fit(WaveNetLit(), train_loader, val_loader)


if __name__ == "__main__":
    main()
