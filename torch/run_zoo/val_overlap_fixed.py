"""Classify synthetic wine-like measurements (11 features, three quality grades) with an MLP,
holding out a random 25% of the rows for validation."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, Subset, TensorDataset


def make_measurements(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 11, generator=g)
    quality = x[:, 0] - 0.7 * x[:, 3] + 0.5 * x[:, 5] * x[:, 6] + 0.4 * torch.randn(n, generator=g)
    return TensorDataset(x, torch.bucketize(quality, torch.tensor([-0.6, 0.6])))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--val-fraction", type=float, default=0.25)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    data = make_measurements(427, args.seed)
    n_train = int(len(data) * (1 - args.val_fraction))
    order = torch.randperm(len(data))
    train_set = Subset(data, order[:n_train].tolist())
    val_set = Subset(data, order[n_train:].tolist())
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=64)
    print(f"train rows {len(train_set)} val rows {len(val_set)}")

    model = nn.Sequential(nn.Linear(11, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 3))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        model.eval()
        correct = 0
        with torch.no_grad():
            for xb, yb in val_loader:
                correct += (model(xb).argmax(1) == yb).sum().item()
        print(f"epoch {epoch} val_acc {correct / len(val_set):.3f}")


if __name__ == "__main__":
    main()
