"""A small pre-norm Transformer classifier of synthetic token sequences (is the marker token
among the first half?) trained with torch.optim.Adam and weight_decay 0.1 on every parameter:
embeddings, LayerNorm weights and biases included, the decay added to the gradient."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

VOCAB, LENGTH, MARKER = 50, 16, 7


def make_sequences(n, seed):
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(8, VOCAB, (n, LENGTH), generator=g)
    where = torch.randint(0, LENGTH, (n,), generator=g)
    tokens[torch.arange(n), where] = MARKER
    return tokens, (where < LENGTH // 2).long()


class Classifier(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, width)
        self.position = nn.Embedding(LENGTH, width)
        layer = nn.TransformerEncoderLayer(width, 4, 64, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, 2)

    def forward(self, tokens):
        x = self.embed(tokens) + self.position(torch.arange(tokens.shape[1]))
        return self.head(self.norm(self.encoder(x)).mean(dim=1))


def optimizer_for(model, lr):
    return torch.optim.Adam(model.parameters(), lr=lr, weight_decay=0.1)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_sequences(960, args.seed)
    loader = DataLoader(TensorDataset(x[:768], y[:768]), batch_size=args.batch_size, shuffle=True)
    model = Classifier()
    optimizer = optimizer_for(model, args.lr)
    for epoch in range(args.epochs):
        model.train()
        for step, (xb, yb) in enumerate(loader):
            loss = nn.functional.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if step % 8 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        model.eval()
        with torch.no_grad():
            acc = (model(x[768:]).argmax(1) == y[768:]).float().mean().item()
        print(f"epoch {epoch} val_acc {acc:.3f}")


if __name__ == "__main__":
    main()
