"""Character-level LSTM language model trained with a plain loop on short sentences of
different lengths. The vocabulary puts the space first, and the batches are right-padded with
id 0, so the padding id is the space's id; `collate` builds the targets and takes the padding
out of the loss (-100, cross_entropy's default ignore_index)."""

import argparse
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

CHARS = " abcdefghijklmnopqrstuvwxyz."
PAD = 0  # the space's id
WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "to", "big", "red", "house", "in",
         "sun", "and", "we", "saw", "it"]


def make_sentences(n, seed):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))) + "." for _ in range(n)]


def collate(sentences):
    width = max(len(s) for s in sentences)
    ids = torch.full((len(sentences), width), PAD)
    lengths = torch.tensor([len(s) for s in sentences])
    for i, s in enumerate(sentences):
        ids[i, : len(s)] = torch.tensor([CHARS.index(c) for c in s])
    inputs, targets = ids[:, :-1], ids[:, 1:].clone()
    targets[torch.arange(width - 1)[None, :] >= (lengths[:, None] - 1)] = -100
    return inputs, targets


class CharLSTM(nn.Module):
    def __init__(self, vocab=len(CHARS), emb=32, hidden=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x):
        h, _ = self.lstm(self.embed(x))
        return self.head(h)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    loader = DataLoader(make_sentences(1600, args.seed), batch_size=args.batch_size, shuffle=True,
                        collate_fn=collate)
    model = CharLSTM()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        for step, (inputs, targets) in enumerate(loader):
            logits = model(inputs)
            loss = F.cross_entropy(logits.transpose(1, 2), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if step % 10 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
