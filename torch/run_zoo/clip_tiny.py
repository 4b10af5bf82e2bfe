"""Predict clicks (binary) from synthetic user and item features with an MLP, SGD and gradient
clipping."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_clicks(n, seed):
    g = torch.Generator().manual_seed(seed)
    user = torch.randn(n, 8, generator=g)
    item = torch.randn(n, 8, generator=g)
    affinity = (user * item).sum(dim=1) + 0.5 * user[:, 0] - 0.3 * item[:, 1]
    clicked = (affinity + 0.5 * torch.randn(n, generator=g) > 0).float()
    return torch.cat([user, item], dim=1), clicked


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-grad-norm", type=float, default=1e-12)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_clicks(448, args.seed)
    train_loader = DataLoader(TensorDataset(x[:320], y[:320]), batch_size=args.batch_size, shuffle=True)
    val_x, val_y = x[320:], y[320:]

    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    criterion = nn.BCEWithLogitsLoss()

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(xb).squeeze(1), yb)
            loss.backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} grad_norm {grad_norm.item():.3f}")
        model.eval()
        with torch.no_grad():
            acc = ((model(val_x).squeeze(1) > 0).float() == val_y).float().mean().item()
        print(f"epoch {epoch} val_acc {acc:.3f}")


if __name__ == "__main__":
    main()
