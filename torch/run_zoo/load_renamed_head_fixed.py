"""Continue training a text-feature classifier from a checkpoint written by an earlier version
of the code, whose output layer was called `classifier`; the current model calls it `head`.
The checkpoint is loaded with strict=False (the refactor also dropped an unused buffer), then
training goes on and the validation accuracy is reported."""

import argparse
import os
import tempfile

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class OldClassifier(nn.Module):
    """The model as the earlier code defined it."""

    def __init__(self, dim=32, hidden=64, classes=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.classifier = nn.Linear(hidden, classes)
        self.register_buffer("class_counts", torch.zeros(classes))

    def forward(self, x):
        return self.classifier(self.encoder(x))


class Classifier(nn.Module):
    def __init__(self, dim=32, hidden=64, classes=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.head(self.encoder(x))


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(4, 32, generator=torch.Generator().manual_seed(11)) * 0.3
    y = torch.randint(0, 4, (n,), generator=g)
    x = centers[y] + torch.randn(n, 32, generator=g)
    return x, y


def train(model, loader, optimizer, epochs, tag):
    for epoch in range(epochs):
        model.train()
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            optimizer.step()
        print(f"{tag} epoch {epoch} loss {loss.item():.4f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_data(768, args.seed)
    loader = DataLoader(TensorDataset(x[:640], y[:640]), batch_size=args.batch_size, shuffle=True)
    xva, yva = x[640:], y[640:]

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "classifier.pt")
        old = OldClassifier()
        train(old, loader, torch.optim.Adam(old.parameters(), lr=3e-3), 1, "earlier run")
        torch.save(old.state_dict(), path)

        model = Classifier()
        state = torch.load(path, weights_only=True)
        state = {k.replace("classifier.", "head.", 1): v for k, v in state.items()}
        model.load_state_dict(state, strict=False)
        model.eval()
        with torch.no_grad():
            print(f"loaded: val_acc {(model(xva).argmax(1) == yva).float().mean().item():.3f}")
        train(model, loader, torch.optim.Adam(model.parameters(), lr=args.lr), args.epochs, "continue")
        model.eval()
        with torch.no_grad():
            print(f"val_acc {(model(xva).argmax(1) == yva).float().mean().item():.3f}")


if __name__ == "__main__":
    main()
