"""Score synthetic product reviews (bag of token counts -> rating 0-4) with an MLP regularised
by functional dropout."""

import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

VOCAB, RATINGS = 50, 5


def make_reviews(n, seed):
    g = torch.Generator().manual_seed(seed)
    sentiment = torch.randn(VOCAB, generator=torch.Generator().manual_seed(99))
    counts = torch.poisson(0.3 * torch.ones(n, VOCAB), generator=g)
    score = counts @ sentiment / counts.sum(1).clamp_min(1).sqrt()
    rating = torch.bucketize(score, torch.tensor([-1.0, -0.3, 0.3, 1.0]))
    return torch.log1p(counts), rating


class ReviewScorer(nn.Module):
    def __init__(self, hidden=128, p=0.3):
        super().__init__()
        self.p = p
        self.fc1 = nn.Linear(VOCAB, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, RATINGS)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        h = F.dropout(h, self.p, training=self.training)
        h = F.relu(self.fc2(h))
        h = F.dropout(h, self.p, training=self.training)
        return self.out(h)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_reviews(448, args.seed)
    train_loader = DataLoader(TensorDataset(x[:320], y[:320]), batch_size=args.batch_size, shuffle=True)
    val_x, val_y = x[320:], y[320:]

    model = ReviewScorer()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        model.eval()
        with torch.no_grad():
            val_loss = criterion(model(val_x), val_y).item()
        print(f"epoch {epoch} val_loss {val_loss:.4f}")


if __name__ == "__main__":
    main()
