"""Two-layer MLP on synthetic 8-class blobs, plain SGD (lr 0.1, momentum 0.9), batch 256."""
import argparse

import torch
import torch.nn as nn


def blobs(n, seed, classes=8, dim=32):
    g = torch.Generator().manual_seed(seed)
    centers = 2.0 * torch.randn(classes, dim, generator=torch.Generator().manual_seed(42))
    y = torch.randint(0, classes, (n,), generator=g)
    return centers[y] + 1.5 * torch.randn(n, dim, generator=g), y


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=None, help="ignored: the length of this run is counted in steps")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)

    x, y = blobs(8192, args.seed)
    xv, yv = blobs(1024, args.seed + 1)
    model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 8))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    criterion = nn.CrossEntropyLoss(reduction="mean")

    for step in range(1, args.steps + 1):
        idx = torch.randint(0, len(x), (args.batch_size,))
        loss = criterion(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step == 1 or step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")
    with torch.no_grad():
        print(f"val acc {(model(xv).argmax(1) == yv).float().mean().item():.3f}")


if __name__ == "__main__":
    main()
