"""Next-value regression on synthetic sensor windows with a small 1-D conv net and AdamW; the
learning rate follows a scaling rule from the batch and the window length."""

import argparse

import torch
from torch import nn


def make_windows(n, length, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.linspace(0, 6.28, length + 1)
    phase = torch.rand(n, 1, generator=g) * 6.28
    freq = 1.0 + torch.rand(n, 1, generator=g)
    wave = torch.sin(freq * t + phase) + 0.05 * torch.randn(n, length + 1, generator=g)
    return wave[:, :-1].unsqueeze(1), wave[:, -1]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--window", type=int, default=64)
    parser.add_argument("--base-lr", type=float, default=1e-2)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    x, y = make_windows(2048, args.window, args.seed)
    model = nn.Sequential(nn.Conv1d(1, 16, 5, padding=2), nn.ReLU(), nn.Conv1d(16, 16, 5, padding=2),
                          nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(16, 1))
    # Scaled down by every sample and position of the data, as if the loss were summed over it.
    lr = args.base_lr / (len(x) * args.window)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    g = torch.Generator().manual_seed(args.seed + 1)
    step = 0
    for epoch in range(args.epochs):
        order = torch.randperm(1536, generator=g)
        for start in range(0, 1536, args.batch_size):
            idx = order[start:start + args.batch_size]
            loss = nn.functional.mse_loss(model(x[idx]).squeeze(1), y[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
        with torch.no_grad():
            val = nn.functional.mse_loss(model(x[1536:]).squeeze(1), y[1536:]).item()
        print(f"epoch {epoch} step {step} loss {loss.item():.4f} val {val:.4f}")


if __name__ == "__main__":
    main()
