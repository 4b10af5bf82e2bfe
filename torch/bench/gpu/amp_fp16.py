"""Train a small convolutional classifier on synthetic images on the GPU with mixed precision:
float16 autocast and a GradScaler (a clean script: nothing should fail)."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_dataset(n, classes, seed):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, classes, (n,), generator=g)
    x = torch.randn(n, 3, 32, 32, generator=g) * 0.5
    x[torch.arange(n), y % 3, :, :] += 1.0  # the class shows in one channel's mean
    return TensorDataset(x, y)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device("cuda")
    loader = DataLoader(make_dataset(2048, 6, args.seed), batch_size=args.batch_size,
                        shuffle=True, pin_memory=True, num_workers=2)
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.1), nn.Linear(64, 6),
    ).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scaler = torch.amp.GradScaler("cuda")
    criterion = nn.CrossEntropyLoss()

    for epoch in range(args.epochs):
        model.train()
        total = torch.zeros((), device=device)
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            total += loss.detach()
        print(f"epoch {epoch} mean loss {total.item() / len(loader):.4f}")


if __name__ == "__main__":
    main()
