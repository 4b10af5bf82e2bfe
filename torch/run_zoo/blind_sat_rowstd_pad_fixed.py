"""Recognise five gestures from accelerometer windows (synthetic, 96 samples each) with a small
1-D conv net, organised as a module with training_step / validation_step / configure_optimizers
and a separate fit loop. Each window is standardised by its own mean and standard deviation
(amplitude-invariant input), and every batch is padded to a fixed size so that all steps have
the same shape; padded rows carry weight 0 in the loss."""

import argparse
import math

import torch
import torch.nn.functional as F
from torch import nn

WINDOW, GESTURES = 96, 5


def make_windows(n, seed):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, GESTURES, (n,), generator=g)
    t = torch.linspace(0, 1, WINDOW)
    freq = 2.0 + 1.5 * y.float()
    phase = 2 * math.pi * torch.rand(n, 1, generator=g)
    gain = 0.3 + 2.0 * torch.rand(n, 1, generator=g)
    x = gain * torch.sin(2 * math.pi * freq.unsqueeze(1) * t + phase)
    x = x + 0.4 * gain * torch.randn(n, WINDOW, generator=g) + torch.randn(n, 1, generator=g)
    return x, y


class FixedShapeBatches:
    """Shuffled batches of exactly `batch_size` rows; the last one is topped up with zero rows."""

    def __init__(self, x, y, batch_size, shuffle, seed):
        self.x, self.y, self.batch_size, self.shuffle = x, y, batch_size, shuffle
        self.g = torch.Generator().manual_seed(seed)

    def __len__(self):
        return math.ceil(len(self.x) / self.batch_size)

    def __iter__(self):
        n = len(self.x)
        order = torch.randperm(n, generator=self.g) if self.shuffle else torch.arange(n)
        for start in range(0, n, self.batch_size):
            idx = order[start:start + self.batch_size]
            pad = self.batch_size - len(idx)
            x = torch.cat([self.x[idx], torch.zeros(pad, WINDOW)])
            y = torch.cat([self.y[idx], torch.zeros(pad, dtype=torch.long)])
            weight = torch.cat([torch.ones(len(idx)), torch.zeros(pad)])
            yield x, y, weight


class GestureModule(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.lr = lr
        self.net = nn.Sequential(
            nn.Conv1d(1, 16, 7, padding=3), nn.ReLU(), nn.MaxPool1d(4),
            nn.Conv1d(16, 32, 5, padding=2), nn.ReLU(), nn.AdaptiveAvgPool1d(1),
            nn.Flatten(), nn.Linear(32, GESTURES),
        )

    def forward(self, x):
        mean = x.mean(dim=1, keepdim=True)
        std = x.std(dim=1, keepdim=True).clamp_min(1e-5)
        return self.net(((x - mean) / std).unsqueeze(1))

    def weighted_loss(self, batch):
        x, y, weight = batch
        logits = self(x)
        per_row = F.cross_entropy(logits, y, reduction="none")
        return (per_row * weight).sum() / weight.sum(), logits

    def training_step(self, batch, step):
        loss, _ = self.weighted_loss(batch)
        return loss

    def validation_step(self, batch, step):
        loss, logits = self.weighted_loss(batch)
        correct = ((logits.argmax(1) == batch[1]).float() * batch[2]).sum()
        return {"loss": loss * batch[2].sum(), "correct": correct, "rows": batch[2].sum()}

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr, weight_decay=1e-2)


class Fit:
    def __init__(self, epochs, log_every):
        self.epochs, self.log_every, self.global_step = epochs, log_every, 0

    def fit(self, module, train_batches, val_batches):
        optimizer = module.configure_optimizers()
        for epoch in range(self.epochs):
            module.train()
            for batch in train_batches:
                loss = module.training_step(batch, self.global_step)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                self.global_step += 1
                if self.global_step % self.log_every == 0:
                    print(f"epoch {epoch} step {self.global_step} train_loss {loss.item():.4f}")
            self.validate(module, val_batches, epoch)

    @torch.no_grad()
    def validate(self, module, val_batches, epoch):
        module.eval()
        outs = [module.validation_step(batch, i) for i, batch in enumerate(val_batches)]
        rows = sum(o["rows"] for o in outs)
        val_loss = sum(o["loss"] for o in outs) / rows
        val_acc = sum(o["correct"] for o in outs) / rows
        print(f"epoch {epoch} step {self.global_step} val_loss {val_loss.item():.4f} val_acc {val_acc.item():.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--log-every", type=int, default=10)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_windows(2400, args.seed)
    train_batches = FixedShapeBatches(x[:2000], y[:2000], args.batch_size, shuffle=True, seed=args.seed)
    val_batches = FixedShapeBatches(x[2000:], y[2000:], args.batch_size, shuffle=False, seed=args.seed)

    Fit(args.epochs, args.log_every).fit(GestureModule(args.lr), train_batches, val_batches)


if __name__ == "__main__":
    main()
