"""Sequence-to-sequence in one stream, trained with a plain loop: a GRU reads a list of letters,
a separator, then writes the list sorted. Only the sorted part is a target (the list's targets
are -100), every example is cut to MAX_LEN tokens, and batches are right-padded with targets
of -100 past each row's length."""

import argparse
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

PAD, SEP, END = 0, 1, 2  # letters are 3..14
VOCAB = 15
MAX_LEN = 40


def make_examples(n, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        letters = [3 + rng.randrange(12) for _ in range(rng.randint(3, 18))]
        out.append(letters + [SEP] + sorted(letters) + [END])
    return out


def collate(examples):
    rows = [ex[:MAX_LEN] for ex in examples]
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), PAD)
    targets = torch.full((len(rows), width - 1), -100)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r)
        answer_from = r.index(SEP) if SEP in r else len(r)
        for t in range(answer_from, len(r) - 1):
            targets[i, t] = r[t + 1]
    return ids[:, :-1], targets


class SortGRU(nn.Module):
    def __init__(self, emb=32, hidden=128):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, emb)
        self.gru = nn.GRU(emb, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, VOCAB)

    def forward(self, x):
        h, _ = self.gru(self.embed(x))
        return self.head(h)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=24)
    parser.add_argument("--lr", type=float, default=3e-3)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    loader = DataLoader(make_examples(960, args.seed), batch_size=args.batch_size, shuffle=True,
                        collate_fn=collate)
    model = SortGRU()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        for step, (inputs, targets) in enumerate(loader):
            logits = model(inputs)
            loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            if step % 10 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
