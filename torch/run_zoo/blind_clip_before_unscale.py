"""Regression MLP trained with mixed precision (CPU autocast, bfloat16) and a GradScaler,
with gradient-norm clipping at 1.0."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 10, generator=g)
    y = torch.sin(x[:, :3].sum(1, keepdim=True)) + 0.5 * x[:, 3:4] * x[:, 4:5]
    return x, y + 0.05 * torch.randn(n, 1, generator=g)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=None, help="ignored: the length of this run is counted in steps")
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--lr", type=float, default=1e-2)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)

    x, y = make_data(4096, args.seed)
    model = nn.Sequential(nn.Linear(10, 128), nn.SiLU(), nn.Linear(128, 128), nn.SiLU(), nn.Linear(128, 1))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scaler = torch.amp.GradScaler("cpu")

    for step in range(1, args.steps + 1):
        idx = torch.randint(0, len(x), (128,))
        with torch.autocast("cpu", dtype=torch.bfloat16):
            pred = model(x[idx])
        loss = F.mse_loss(pred.float(), y[idx])
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        if step == 1 or step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f} scale {scaler.get_scale():.0f}")


if __name__ == "__main__":
    main()
