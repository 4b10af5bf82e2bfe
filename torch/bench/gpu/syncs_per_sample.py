"""Train an MLP classifier on synthetic features on the GPU, with the running accuracy counted
sample by sample in Python (one host-device synchronisation per sample)."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_dataset(n, features, classes, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=g)
    w = torch.randn(features, classes, generator=g)
    y = (x @ w).argmax(dim=1)
    return TensorDataset(x, y)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--log-every", type=int, default=10)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = DataLoader(make_dataset(4096, 32, 8, args.seed), batch_size=args.batch_size,
                        shuffle=True, pin_memory=True)
    model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 8)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        correct, seen = 0, 0
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            logits = model(x)
            loss = criterion(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            predicted = logits.argmax(dim=1)
            for i in range(len(y)):
                correct += int(predicted[i] == y[i])
            seen += len(y)
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} acc {correct / seen:.3f}")


if __name__ == "__main__":
    main()
