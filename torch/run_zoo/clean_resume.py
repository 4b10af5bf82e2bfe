"""Train, checkpoint, and resume.

The first half of the epochs trains a classifier and writes a checkpoint (model, optimizer and
scheduler state, the epoch reached) into a temporary directory. Then, as after a restart, it
builds a fresh model, optimizer and scheduler, loads the checkpoint and trains the remaining epochs.
"""

import argparse
import os
import tempfile

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_data(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(640, 12, generator=g)
    centers = torch.randn(5, 12, generator=g) * 1.2
    y = torch.cdist(x, centers).argmin(1)
    return x[:512], y[:512], x[512:], y[512:]


def build(lr, steps_per_epoch, epochs):
    model = nn.Sequential(nn.Linear(12, 48), nn.ReLU(), nn.Dropout(0.1), nn.Linear(48, 5))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=lr, total_steps=steps_per_epoch * epochs)
    return model, optimizer, scheduler


def train_epochs(model, optimizer, scheduler, loader, first, last, val):
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(first, last):
        model.train()
        seen, total = 0, 0.0
        for i, (xb, yb) in enumerate(loader):
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += loss.item() * len(yb)
            seen += len(yb)
            if i % 4 == 0:
                print(f"  epoch {epoch} iter {i} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.5f}")
        model.eval()
        with torch.no_grad():
            acc = (model(val[0]).argmax(1) == val[1]).float().mean().item()
        print(f"epoch {epoch} train_loss {total / seen:.4f} val_acc {acc:.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    xtr, ytr, xva, yva = make_data(args.seed)
    loader = DataLoader(TensorDataset(xtr, ytr), batch_size=args.batch_size, shuffle=True)
    stop_at = max(1, args.epochs // 2)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "checkpoint.pt")

        model, optimizer, scheduler = build(args.lr, len(loader), args.epochs)
        print(f"training epochs 0..{stop_at - 1}")
        train_epochs(model, optimizer, scheduler, loader, 0, stop_at, (xva, yva))
        torch.save({
            "epoch": stop_at,
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
        }, path)
        print(f"saved checkpoint at epoch {stop_at}")
        del model, optimizer, scheduler

        model, optimizer, scheduler = build(args.lr, len(loader), args.epochs)
        state = torch.load(path, weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        start = state["epoch"]
        print(f"resumed from epoch {start}, lr {scheduler.get_last_lr()[0]:.5f}")
        train_epochs(model, optimizer, scheduler, loader, start, args.epochs, (xva, yva))


if __name__ == "__main__":
    main()
