"""Sentiment of short synthetic reviews with a bag-of-embeddings classifier, written as a module
with training_step / configure_optimizers and a small trainer that clips gradients by value
from its settings."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

VOCAB, LENGTH = 200, 12


def make_reviews(n, seed):
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, VOCAB, (n, LENGTH), generator=g)
    # Words below 100 read positive, the rest negative: a review is positive when most are.
    return tokens, ((tokens < VOCAB // 2).sum(1) > LENGTH // 2).long()


class ReviewClassifier(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.lr = lr
        self.embed = nn.EmbeddingBag(VOCAB, 32, mode="sum")
        self.head = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 2))

    def forward(self, tokens):
        return self.head(self.embed(tokens))

    def training_step(self, batch):
        tokens, labels = batch
        return nn.functional.cross_entropy(self(tokens), labels)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


class Trainer:
    def __init__(self, epochs, gradient_clip_val):
        self.epochs = epochs
        self.gradient_clip_val = gradient_clip_val

    def fit(self, module, loader):
        optimizer = module.configure_optimizers()
        step = 0
        for epoch in range(self.epochs):
            for batch in loader:
                optimizer.zero_grad()
                loss = module.training_step(batch)
                loss.backward()
                nn.utils.clip_grad_norm_(module.parameters(), self.gradient_clip_val)
                optimizer.step()
                step += 1
                if step % 10 == 0:
                    print(f"epoch {epoch} step {step} loss {loss.item():.4f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--batch-size", type=int, default=32)
    # The clip norm came from a settings file where the key beside it was the weight decay.
    parser.add_argument("--gradient-clip-val", type=float, default=1e-5)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    x, y = make_reviews(640, args.seed)
    loader = DataLoader(TensorDataset(x[:512], y[:512]), batch_size=args.batch_size, shuffle=True)
    module = ReviewClassifier(args.lr)
    Trainer(args.epochs, args.gradient_clip_val).fit(module, loader)
    with torch.no_grad():
        module.eval()
        acc = (module(x[512:]).argmax(1) == y[512:]).float().mean().item()
    print(f"val_acc {acc:.3f}")


if __name__ == "__main__":
    main()
