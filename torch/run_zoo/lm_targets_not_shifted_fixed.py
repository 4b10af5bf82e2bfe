"""Train a small GRU language model (plain nn.Module) on synthetic key/value sequences: a random
key token followed by its fixed value token."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

KEYS = 8
VOCAB = 2 * KEYS
SEQ_LEN = 32


def make_sequences(n, seed):
    g = torch.Generator().manual_seed(seed)
    table = torch.randperm(KEYS, generator=torch.Generator().manual_seed(1234))
    keys = torch.randint(0, KEYS, (n, SEQ_LEN // 2), generator=g)
    return torch.stack([keys, KEYS + table[keys]], dim=2).reshape(n, SEQ_LEN)


class GRULanguageModel(nn.Module):
    def __init__(self, vocab, dim=32, hidden=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        h, _ = self.rnn(self.embed(tokens))
        return self.out(h)


def lm_loss(logits, tokens):
    return nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), tokens.reshape(-1))


@torch.no_grad()
def value_accuracy(model, rows):
    model.eval()
    predicted = model(rows)[:, 0::2].argmax(dim=-1)
    model.train()
    return (predicted == rows[:, 1::2]).float().mean().item()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    loader = DataLoader(TensorDataset(make_sequences(160, args.seed)), batch_size=args.batch_size, shuffle=True)
    val_rows = make_sequences(64, args.seed + 1)

    model = GRULanguageModel(VOCAB)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    step = 0
    for epoch in range(args.epochs):
        for (tokens,) in loader:
            logits = model(tokens)
            loss = lm_loss(logits[:, :-1], tokens[:, 1:])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        print(f"epoch {epoch} value accuracy {value_accuracy(model, val_rows):.3f}")


if __name__ == "__main__":
    main()
