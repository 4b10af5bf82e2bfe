"""Small CNN on synthetic 16x16 "bar" images, trained with CPU autocast (bfloat16) and a GradScaler.
Gradients are unscaled before they are clipped to norm 1.0, so the clip acts on true gradients."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def bars(n, g):
    y = torch.randint(0, 2, (n,), generator=g)
    img = 0.3 * torch.randn(n, 1, 16, 16, generator=g)
    pos = torch.randint(2, 14, (n,), generator=g)
    for i in range(n):
        if y[i] == 0:
            img[i, 0, pos[i], :] += 1.0
        else:
            img[i, 0, :, pos[i]] += 1.0
    return img, y


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=None, help="ignored: the length of this run is counted in steps")
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed)

    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(16, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    scaler = torch.amp.GradScaler("cpu")

    for step in range(1, args.steps + 1):
        x, y = bars(64, g)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(x)
        loss = F.cross_entropy(logits.float(), y)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        if step == 1 or step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f} grad_norm {grad_norm.item():.3f} scale {scaler.get_scale():.0f}")


if __name__ == "__main__":
    main()
