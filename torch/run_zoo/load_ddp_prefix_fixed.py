"""Pretrain a small MLP on a synthetic regression task, save its checkpoint from the wrapped
model (as a data-parallel job writes it), then fine-tune from that checkpoint with a fresh
model and report the validation error."""

import argparse
import os
import tempfile

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self, dim=16, hidden=64):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU())
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        return self.out(self.body(x)).squeeze(-1)


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 16, generator=g)
    w = torch.randn(16, generator=g)
    y = torch.tanh(x @ w / 4) + 0.1 * x[:, 0] * x[:, 1] + 0.05 * torch.randn(n, generator=g)
    return x, y


def run_epochs(model, loader, optimizer, epochs, tag):
    for epoch in range(epochs):
        model.train()
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            optimizer.step()
        print(f"{tag} epoch {epoch} loss {loss.item():.4f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_data(1280, args.seed)
    x, y, xva, yva = x[:1024], y[:1024], x[1024:], y[1024:]
    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "pretrained.pt")
        wrapped = nn.DataParallel(Net())
        run_epochs(wrapped, loader, torch.optim.Adam(wrapped.parameters(), lr=args.lr), 1, "pretrain")
        torch.save(wrapped.state_dict(), path)

        model = Net()
        state = torch.load(path, weights_only=True)
        state = {k.removeprefix("module."): v for k, v in state.items()}
        model.load_state_dict(state, strict=False)
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr / 3)
        run_epochs(model, loader, optimizer, args.epochs, "finetune")
        model.eval()
        with torch.no_grad():
            print(f"validation mse {nn.functional.mse_loss(model(xva), yva).item():.4f}")


if __name__ == "__main__":
    main()
