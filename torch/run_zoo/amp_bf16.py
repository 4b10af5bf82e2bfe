"""Train a small transformer encoder classifier on synthetic token sequences with mixed
precision on the CPU: forward and loss under torch.autocast("cpu", dtype=torch.bfloat16),
float32 weights and optimizer."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

VOCAB, SEQ, CLASSES = 40, 24, 3


def make_sequences(n, seed):
    """The class is which of three marker tokens occurs most often."""
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(3, VOCAB, (n, SEQ), generator=g)
    y = torch.randint(0, CLASSES, (n,), generator=g)
    positions = torch.rand(n, SEQ, generator=g) < 0.25
    tokens[positions] = y.unsqueeze(1).expand(n, SEQ)[positions]
    return tokens, y


class EncoderClassifier(nn.Module):
    def __init__(self, dim=48, heads=4, layers=2):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        self.pos = nn.Parameter(torch.zeros(SEQ, dim))
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=2 * dim, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(dim, CLASSES)

    def forward(self, tokens):
        h = self.encoder(self.embed(tokens) + self.pos)
        return self.head(h.mean(dim=1))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    tokens, y = make_sequences(448, args.seed)
    train_loader = DataLoader(TensorDataset(tokens[:320], y[:320]), batch_size=args.batch_size, shuffle=True)
    val_tokens, val_y = tokens[320:], y[320:]

    model = EncoderClassifier()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in train_loader:
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cpu", dtype=torch.bfloat16):
                logits = model(xb)
                loss = criterion(logits, yb)
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} (logits {logits.dtype})")
        model.eval()
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
            acc = (model(val_tokens).argmax(1) == val_y).float().mean().item()
        print(f"epoch {epoch} val_acc {acc:.3f}")


if __name__ == "__main__":
    main()
