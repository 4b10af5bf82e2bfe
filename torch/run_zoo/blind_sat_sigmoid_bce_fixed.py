"""Flag suspicious card transactions (synthetic, 24 features) with an MLP and a binary
cross-entropy written out from the sigmoid probability; plain DataLoader loop, Adam,
validation accuracy after every epoch."""

import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FEATURES = 24


def make_transactions(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, FEATURES, generator=g)
    w = torch.randn(FEATURES, generator=g)
    score = x @ w + 0.5 * x[:, 0] * x[:, 1]
    y = (score > 0.8).float()
    return x, y


def binary_cross_entropy(logits, target):
    return -(target * F.logsigmoid(logits) + (1 - target) * F.logsigmoid(-logits)).mean()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch-size", type=int, default=48)
    parser.add_argument("--log-every", type=int, default=25)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_transactions(18000, args.seed)
    train = DataLoader(TensorDataset(x[:16800], y[:16800]), batch_size=args.batch_size, shuffle=True)
    val = DataLoader(TensorDataset(x[16800:], y[16800:]), batch_size=400)

    model = nn.Sequential(
        nn.Linear(FEATURES, 64), nn.ReLU(),
        nn.Linear(64, 64), nn.ReLU(),
        nn.Linear(64, 1),
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in train:
            logits = model(xb).squeeze(1)
            loss = binary_cross_entropy(logits, yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")

        model.eval()
        correct = 0
        with torch.no_grad():
            for xb, yb in val:
                correct += ((model(xb).squeeze(1) > 0).float() == yb).sum().item()
        print(f"epoch {epoch} val_acc {correct / 1200:.3f}")


if __name__ == "__main__":
    main()
