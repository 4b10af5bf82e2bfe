"""Classify synthetic leaf measurements (eight features, four species) with an MLP. The rows
come grouped by species, as the collection was recorded."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

SPECIES = 4


def make_leaves(per_species, held_out, seed):
    """Rows grouped by species; the last `held_out` rows of each species are for validation."""
    g = torch.Generator().manual_seed(seed)
    centres = torch.randn(SPECIES, 8, generator=g)
    train, val = ([], []), ([], [])
    for s in range(SPECIES):
        rows = centres[s] + 0.7 * torch.randn(per_species + held_out, 8, generator=g)
        labels = torch.full((per_species + held_out,), s)
        train[0].append(rows[:per_species])
        train[1].append(labels[:per_species])
        val[0].append(rows[per_species:])
        val[1].append(labels[per_species:])
    return [torch.cat(t) for t in train], [torch.cat(v) for v in val]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.04)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--log-every", type=int, default=2)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    (x, y), (val_x, val_y) = make_leaves(80, 20, args.seed)
    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=False)

    model = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, SPECIES))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        model.eval()
        with torch.no_grad():
            acc = (model(val_x).argmax(1) == val_y).float().mean().item()
        print(f"epoch {epoch} val_acc {acc:.3f}")


if __name__ == "__main__":
    main()
