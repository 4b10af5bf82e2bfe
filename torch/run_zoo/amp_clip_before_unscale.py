"""Classify synthetic sensor windows (three machine states) with a small 1-D CNN under fp16
autocast and a GradScaler, SGD with momentum and gradient-norm clipping at 1.0. The clip runs
before scaler.unscale_, on gradients still multiplied by the scale."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_windows(n, seed):
    g = torch.Generator().manual_seed(seed)
    state = torch.randint(0, 3, (n,), generator=g)
    t = torch.linspace(0, 1, 64)
    freq = torch.tensor([3.0, 7.0, 12.0])[state]
    signal = torch.sin(2 * torch.pi * freq[:, None] * t[None, :])
    signal = signal + 0.4 * torch.randn(n, 64, generator=g)
    return signal[:, None, :], state


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-grad-norm", type=float, default=1.0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x, y = make_windows(800, args.seed)
    loader = DataLoader(TensorDataset(x[:640], y[:640]), batch_size=args.batch_size, shuffle=True)
    model = nn.Sequential(nn.Conv1d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool1d(2),
                          nn.Conv1d(16, 32, 5, padding=2), nn.ReLU(), nn.AdaptiveAvgPool1d(1),
                          nn.Flatten(), nn.Linear(32, 3)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scaler = torch.amp.GradScaler(device)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            with torch.autocast(device_type=device, dtype=torch.float16):
                loss = nn.functional.cross_entropy(model(xb), yb)
            scaler.scale(loss).backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            scaler.unscale_(optimizer)
            scaler.step(optimizer)
            scaler.update()
            step += 1
            if step % 10 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} grad norm {norm.item():.1f}")
        model.eval()
        with torch.no_grad(), torch.autocast(device_type=device, dtype=torch.float16):
            acc = (model(x[640:].to(device)).argmax(1).cpu() == y[640:]).float().mean().item()
        print(f"epoch {epoch} val_acc {acc:.3f}")


if __name__ == "__main__":
    main()
