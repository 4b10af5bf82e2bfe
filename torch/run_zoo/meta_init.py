"""Build a small transformer-style regressor on the meta device (no memory until it is
materialised), run one forward there to read its output shape, then materialise it: either
`to_empty()` and a fresh initialisation, or weights loaded with `load_state_dict(assign=True)`
from a checkpoint kept in memory. The optimizer is built once every parameter holds data."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.ff = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))

    def forward(self, x):
        return x + self.ff(self.norm(x))


class Regressor(nn.Module):
    def __init__(self, features, width, depth):
        super().__init__()
        self.inp = nn.Linear(features, width)
        self.blocks = nn.Sequential(*[Block(width) for _ in range(depth)])
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        return self.out(self.blocks(self.inp(x))).squeeze(-1)


def initialise(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.zero_()
            elif p.dim() == 1:
                p.fill_(1.0)
            else:
                p.copy_(torch.randn(p.shape, generator=g) / p.shape[1] ** 0.5)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--load", choices=("empty", "assign"), default=None)
    args = parser.parse_args()
    load = args.load or ("assign" if args.seed % 2 else "empty")

    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed)
    x = torch.randn(512, 12, generator=g)
    y = torch.sin(x[:, 0]) + 0.5 * x[:, 1] * x[:, 2] + 0.05 * torch.randn(512, generator=g)
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)

    with torch.device("meta"):
        model = Regressor(12, 32, 2)
        shape = model(torch.empty(4, 12)).shape
    print(f"built on meta: {sum(p.numel() for p in model.parameters())} parameters, "
          f"output {tuple(shape)}")

    if load == "empty":
        model = model.to_empty(device="cpu")
        initialise(model, args.seed)
    else:
        donor = Regressor(12, 32, 2)
        initialise(donor, args.seed)
        model.load_state_dict(donor.state_dict(), assign=True)
    assert not any(p.is_meta for p in model.parameters())

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    loss_fn = nn.MSELoss()
    for epoch in range(args.epochs):
        for step, (xb, yb) in enumerate(loader):
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            if step % 5 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
