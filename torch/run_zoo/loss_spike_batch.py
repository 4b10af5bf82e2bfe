"""Regress the (standardised) length of stay from synthetic patient records with an MLP. The
export marks a record whose outcome is missing with the sentinel -9999."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

MISSING = -9999.0


def export_records(n, seed):
    """Records as the export writes them: one has no recorded outcome."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 10, generator=g)
    stay = x[:, 0] + 0.8 * x[:, 1] * x[:, 2] - 0.5 * x[:, 3] + 0.3 * torch.randn(n, generator=g)
    stay[n // 3] = MISSING
    return x, stay.unsqueeze(1)


def load_records(n, seed):
    x, y = export_records(n, seed)
    return x, y


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-grad-norm", type=float, default=1.0)
    parser.add_argument("--log-every", type=int, default=1)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = load_records(321, args.seed)
    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True, drop_last=True)

    model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.MSELoss()

    step = 0
    for epoch in range(args.epochs):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} mse {loss.item():.4f}")


if __name__ == "__main__":
    main()
