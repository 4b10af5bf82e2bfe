"""Train an MLP regressor, checkpoint it mid-run (model + optimizer + step), then rebuild the model
and optimizer from scratch, load the checkpoint strictly and continue training to the end."""
import argparse
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 8, generator=g)
    y = (x[:, :4] ** 2).sum(1, keepdim=True) - x[:, 4:5] + 0.1 * torch.randn(n, 1, generator=g)
    return x, y


def build():
    model = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return model, opt


def train(model, opt, x, y, start, end, g):
    for step in range(start + 1, end + 1):
        idx = torch.randint(0, len(x), (64,), generator=g)
        loss = F.mse_loss(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")
    return end


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=None, help="ignored: the length of this run is counted in steps")
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--save-at", type=int, default=60)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed + 1)
    x, y = make_data(4096, args.seed)

    model, opt = build()
    step = train(model, opt, x, y, 0, args.save_at, g)
    path = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step,
                "data_rng": g.get_state()}, path)
    print(f"saved checkpoint at step {step}")
    del model, opt

    model, opt = build()
    ckpt = torch.load(path, map_location="cpu")
    model.load_state_dict(ckpt["model"], strict=True)
    opt.load_state_dict(ckpt["optimizer"])
    g.set_state(ckpt["data_rng"])
    with torch.no_grad():
        print(f"resumed at step {ckpt['step']}, full-data loss {F.mse_loss(model(x), y).item():.4f}")
    train(model, opt, x, y, ckpt["step"], args.steps, g)


if __name__ == "__main__":
    main()
