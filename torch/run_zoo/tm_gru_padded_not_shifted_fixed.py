"""Character-level GRU language model over names of different lengths, batched time-major the
way torch.nn.utils.rnn.pad_sequence does by default: (T, B), padded with PAD, `<` and `>`
around each name; NLLLoss over log-softmax outputs ignores the padding. `pair` makes the inputs
and the targets of a padded batch."""

import argparse
import random

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

PAD, BOS, EOS = 0, 1, 2
LETTERS = "abcdefghijklmnopqrstuvwxyz"
SYLLABLES = ["ka", "ri", "mo", "len", "sa", "tor", "vi", "an", "el", "du", "mi", "ros"]


def make_names(n, seed):
    rng = random.Random(seed)
    return ["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 5))) for _ in range(n)]


def encode(name):
    return torch.tensor([BOS] + [3 + LETTERS.index(c) for c in name] + [EOS])


def collate(names):
    return pad_sequence([encode(n) for n in names], padding_value=PAD)  # (T, B)


def pair(batch):
    return batch[:-1], batch[1:]


class CharGRU(nn.Module):
    def __init__(self, vocab=3 + len(LETTERS), emb=24, hidden=96):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=PAD)
        self.gru = nn.GRU(emb, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x):
        h, _ = self.gru(self.embed(x))
        return torch.log_softmax(self.out(h), dim=-1)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    loader = DataLoader(make_names(2000, args.seed), batch_size=args.batch_size, shuffle=True,
                        collate_fn=collate)
    model = CharGRU()
    criterion = nn.NLLLoss(ignore_index=PAD)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        total, batches = 0.0, 0
        for batch in loader:
            inputs, targets = pair(batch)
            logp = model(inputs)
            loss = criterion(logp.reshape(-1, logp.size(-1)), targets.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total, batches = total + loss.item(), batches + 1
        print(f"epoch {epoch} loss {total / batches:.3f}")


if __name__ == "__main__":
    main()
