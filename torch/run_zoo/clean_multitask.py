"""Multi-task learning: one shared trunk, a classification head and a regression head.

Synthetic sensor readings -> (device state: one of 3 classes, remaining lifetime: a scalar).
The training loss is cross_entropy + reg_weight * mse; both tasks are evaluated separately.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset, random_split


def synthesize(n, seed, features=16):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=gen)
    w_cls = torch.randn(features, 3, generator=gen)
    w_reg = torch.randn(features, generator=gen) / features ** 0.5
    state = (x @ w_cls).argmax(1)
    lifetime = torch.tanh(x @ w_reg) * 2.0 + 0.5 * state.float() + 0.05 * torch.randn(n, generator=gen)
    return TensorDataset(x, state, lifetime)


class TwoHeaded(nn.Module):
    def __init__(self, features=16, width=64, n_classes=3):
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Linear(features, width), nn.GELU(),
            nn.Linear(width, width), nn.GELU(),
        )
        self.cls_head = nn.Linear(width, n_classes)
        self.reg_head = nn.Sequential(nn.Linear(width, 32), nn.GELU(), nn.Linear(32, 1))

    def forward(self, x):
        h = self.trunk(x)
        return self.cls_head(h), self.reg_head(h).squeeze(-1)


def run_epoch(model, loader, reg_weight, optimizer=None):
    training = optimizer is not None
    model.train(training)
    totals = {"loss": 0.0, "ce": 0.0, "mse": 0.0, "acc": 0.0}
    n = 0
    with torch.set_grad_enabled(training):
        for x, state, lifetime in loader:
            logits, pred_life = model(x)
            ce = F.cross_entropy(logits, state)
            mse = F.mse_loss(pred_life, lifetime)
            loss = ce + reg_weight * mse
            if training:
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
            b = x.size(0)
            n += b
            totals["loss"] += loss.item() * b
            totals["ce"] += ce.item() * b
            totals["mse"] += mse.item() * b
            totals["acc"] += (logits.argmax(1) == state).sum().item()
    return {k: v / n for k, v in totals.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--reg-weight", type=float, default=0.5)
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    full = synthesize(600, args.seed)
    train_set, val_set = random_split(full, [480, 120], generator=torch.Generator().manual_seed(args.seed))
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=120)

    model = TwoHeaded()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        tr = run_epoch(model, train_loader, args.reg_weight, optimizer)
        va = run_epoch(model, val_loader, args.reg_weight)
        print(f"epoch {epoch}: train loss {tr['loss']:.4f} (ce {tr['ce']:.4f}, mse {tr['mse']:.4f}) | "
              f"val ce {va['ce']:.4f} acc {va['acc']:.3f} mse {va['mse']:.4f}")


if __name__ == "__main__":
    main()
