"""Fine-tune a small token classifier on synthetic sequences with its embedding table frozen
(the embeddings stand in for pretrained ones)."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

VOCAB, DIM, SEQ, CLASSES = 64, 32, 16, 4


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class TokenClassifier(nn.Module):
    def __init__(self, layers=4):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.blocks = nn.ModuleList(Block(DIM) for _ in range(layers))
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, tokens):
        h = self.embed(tokens)
        for block in self.blocks:
            h = block(h)
        return self.head(h.mean(dim=1))


def make_sequences(n, seed):
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, VOCAB, (n, SEQ), generator=g)
    y = (tokens % CLASSES).mode(dim=1).values
    return tokens, y


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--freeze", default="embed", help="parameters whose name contains this stay frozen")
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    tokens, y = make_sequences(448, args.seed)
    train_loader = DataLoader(TensorDataset(tokens[:320], y[:320]), batch_size=args.batch_size, shuffle=True)
    val_tokens, val_y = tokens[320:], y[320:]

    model = TokenClassifier()
    for name, param in model.named_parameters():
        if args.freeze in name:
            param.requires_grad = False
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    print(f"trainable parameters: {trainable} of {total}")

    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr)
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
            acc = (model(val_tokens).argmax(1) == val_y).float().mean().item()
        print(f"epoch {epoch} val_acc {acc:.3f}")


if __name__ == "__main__":
    main()
