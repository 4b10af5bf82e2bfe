"""Classify synthetic audio clips from their band energies: a log-compression front end, then
an MLP. One clip in the data is silent."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

BANDS, CLASSES = 32, 4


def make_clips(n, seed, silent=1):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, CLASSES, (n,), generator=g)
    centre = 4 + 8 * y.float()
    band = torch.arange(BANDS).float()
    energy = torch.exp(-((band - centre.unsqueeze(1)) ** 2) / 20) + 0.05 * torch.rand(n, BANDS, generator=g)
    energy = energy * (0.5 + torch.rand(n, 1, generator=g))
    energy[torch.randperm(n, generator=g)[:silent]] = 0.0
    return energy, y


class LogCompression(nn.Module):
    def forward(self, energy):
        return torch.log(energy.clamp_min(1e-6))


class ClipClassifier(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.frontend = LogCompression()
        self.norm = nn.LayerNorm(BANDS)
        self.mlp = nn.Sequential(nn.Linear(BANDS, hidden), nn.ReLU(), nn.Linear(hidden, CLASSES))

    def forward(self, energy):
        return self.mlp(self.norm(self.frontend(energy)))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_clips(320, args.seed)
    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True)

    model = ClipClassifier()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        for energy, label in loader:
            optimizer.zero_grad()
            loss = criterion(model(energy), label)
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
