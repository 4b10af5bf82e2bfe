"""SimCLR-style contrastive learning on synthetic vectors.

Each sample is a noisy copy of one of a handful of hidden prototypes. Two random augmentations
(feature dropout, jitter, per-sample scaling) give two views of every sample; an encoder plus a
projection head is trained with the NT-Xent / InfoNCE loss on the cosine similarities of the
2N projections. A nearest-centroid probe on the encoder features reports how well the hidden
classes separate.
"""

import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

DIM = 32
N_PROTOTYPES = 6


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    prototypes = torch.randn(N_PROTOTYPES, DIM, generator=g)
    labels = torch.randint(0, N_PROTOTYPES, (n,), generator=g)
    x = prototypes[labels] + 2.0 * torch.randn(n, DIM, generator=g)
    return x, labels


def augment(x):
    keep = (torch.rand_like(x) > 0.2).float()
    scale = 0.8 + 0.4 * torch.rand(x.size(0), 1)
    return (x * keep) * scale + 0.3 * torch.randn_like(x)


class Encoder(nn.Module):
    def __init__(self, hidden=64, feat=32, proj=16):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Linear(DIM, hidden), nn.BatchNorm1d(hidden), nn.ReLU(),
            nn.Linear(hidden, feat),
        )
        self.projector = nn.Sequential(nn.ReLU(), nn.Linear(feat, feat), nn.ReLU(), nn.Linear(feat, proj))

    def forward(self, x):
        h = self.backbone(x)
        return h, self.projector(h)


def nt_xent(z1, z2, temperature):
    """InfoNCE over 2N views: for each view the positive is its partner, the negatives are the
    other 2N - 2 views in the batch."""
    n = z1.size(0)
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.t() / temperature
    sim.fill_diagonal_(float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)


@torch.no_grad()
def centroid_probe(model, train_x, train_y, test_x, test_y):
    model.eval()
    f_train = F.normalize(model(train_x)[0], dim=1)
    f_test = F.normalize(model(test_x)[0], dim=1)
    centroids = torch.stack([f_train[train_y == c].mean(0) for c in range(N_PROTOTYPES)])
    pred = (f_test @ F.normalize(centroids, dim=1).t()).argmax(1)
    return (pred == test_y).float().mean().item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--temperature", type=float, default=0.2)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_data(800, args.seed)
    train_x, train_y, test_x, test_y = x[:640], y[:640], x[640:], y[640:]
    loader = DataLoader(TensorDataset(train_x), batch_size=args.batch_size, shuffle=True, drop_last=True)

    model = Encoder()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    print(f"before training: probe acc {centroid_probe(model, train_x, train_y, test_x, test_y):.3f}")
    step = 0
    for epoch in range(args.epochs):
        model.train()
        running = 0.0
        for (xb,) in loader:
            _, z1 = model(augment(xb))
            _, z2 = model(augment(xb))
            loss = nt_xent(z1, z2, args.temperature)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item()
            step += 1
            if step % 5 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        acc = centroid_probe(model, train_x, train_y, test_x, test_y)
        print(f"epoch {epoch} mean loss {running / len(loader):.4f} probe acc {acc:.3f}")


if __name__ == "__main__":
    main()
