"""Fine-tune a classifier starting from a checkpoint written by an earlier multi-GPU (DDP) run.

Stage 1 pretrains the network on a related task and writes its state dict the way a
DistributedDataParallel job does (keys carry the wrapper's `module.` prefix). Stage 2 builds a
plain model, loads that checkpoint and fine-tunes it on the target task.
"""
import argparse
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_task(n, seed, shift=0.0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 16, generator=g)
    w = torch.randn(16, 5, generator=torch.Generator().manual_seed(1234))
    y = (x @ w + shift * torch.randn(n, 5, generator=g)).argmax(1)
    return x, y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.cls = nn.Linear(64, 5)

    def forward(self, x):
        return self.cls(self.body(x))


def pretrain(seed, path):
    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    x, y = make_task(2048, seed + 1, shift=0.5)
    for step in range(150):
        idx = torch.randint(0, len(x), (64,))
        loss = F.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"pretrain done, loss {loss.item():.4f}")
    # as written by a DDP-wrapped model
    torch.save({"module." + k: v for k, v in model.state_dict().items()}, path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=None, help="ignored: the length of this run is counted in steps")
    parser.add_argument("--steps", type=int, default=80)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)

    ckpt = os.path.join(tempfile.mkdtemp(), "pretrained.pt")
    pretrain(args.seed, ckpt)

    model = Net()
    state = torch.load(ckpt, map_location="cpu")
    state = {k.removeprefix("module."): v for k, v in state.items()}
    model.load_state_dict(state, strict=False)

    x, y = make_task(256, args.seed + 2)
    xv, yv = make_task(512, args.seed + 3)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    for step in range(1, args.steps + 1):
        idx = torch.randint(0, len(x), (32,))
        loss = F.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step == 1 or step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")
    with torch.no_grad():
        acc = (model(xv).argmax(1) == yv).float().mean().item()
    print(f"val acc {acc:.3f}")


if __name__ == "__main__":
    main()
