"""Character-level recurrent language model on a generated corpus of nursery-style lines, batch
first, with the gradients clipped to a norm of 0.25 before every update: a GRU or an LSTM, and
Adam or a hand-written SGD update at a high rate (the recipe of the classic RNN language models,
where the clip, not the rate, bounds every step)."""

import argparse
import random

import torch
from torch import nn

ANIMALS = ["cat", "hen", "goat", "duck", "mouse", "sheep", "fox"]
PLACES = ["barn", "hill", "pond", "mill", "lane", "wood"]
DEEDS = ["sat by the", "ran to the", "slept in the", "sang near the", "hid behind the"]


def make_text(n_lines, seed):
    rng = random.Random(seed)
    lines = []
    for _ in range(n_lines):
        line = f"the {rng.choice(ANIMALS)} {rng.choice(DEEDS)} {rng.choice(PLACES)}"
        if rng.random() < 0.3:
            line += f" with the {rng.choice(ANIMALS)}"
        lines.append(line + ".\n")
    return "".join(lines)


class CharLM(nn.Module):
    def __init__(self, vocab, cell, width):
        super().__init__()
        self.embed = nn.Embedding(vocab, 24)
        rnn = nn.GRU if cell == "gru" else nn.LSTM
        self.rnn = rnn(24, width, num_layers=2, batch_first=True)
        self.out = nn.Linear(width, vocab)

    def forward(self, x):
        h, _ = self.rnn(self.embed(x))
        return self.out(h)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cell", choices=("gru", "lstm"), default="gru")
    parser.add_argument("--update", choices=("adam", "hand"), default="adam")
    parser.add_argument("--lr", type=float, default=None)
    parser.add_argument("--clip", type=float, default=0.25)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--window", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batches", type=int, default=40, help="windows drawn per epoch")
    args = parser.parse_args()
    lr = args.lr if args.lr is not None else (3e-3 if args.update == "adam" else 20.0)

    torch.manual_seed(args.seed)
    text = make_text(1500, args.seed)
    chars = sorted(set(text))
    ids = torch.tensor([chars.index(c) for c in text])
    cut = len(ids) * 9 // 10
    train, held_out = ids[:cut], ids[cut:]
    model = CharLM(len(chars), args.cell, args.width)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr) if args.update == "adam" else None

    def windows(source, n):
        starts = torch.randint(0, len(source) - args.window - 1, (n,))
        w = torch.stack([source[s:s + args.window + 1] for s in starts.tolist()])
        return w[:, :-1], w[:, 1:]

    def loss_of(inputs, targets):
        logits = model(inputs)
        return nn.functional.cross_entropy(logits.reshape(-1, len(chars)), targets.reshape(-1))

    for epoch in range(args.epochs):
        model.train()
        for batch in range(args.batches):
            inputs, targets = windows(train, args.batch_size)
            loss = loss_of(inputs, targets)
            if optimizer is not None:
                optimizer.zero_grad()
            loss.backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            if optimizer is not None:
                optimizer.step()
            else:
                with torch.no_grad():
                    for p in model.parameters():
                        p.add_(p.grad, alpha=-lr)
                model.zero_grad()
            if batch % 10 == 0:
                print(f"epoch {epoch} batch {batch} loss {loss.item():.3f} "
                      f"grad norm before the clip {norm.item():.2f}")
        model.eval()
        with torch.no_grad():
            held = loss_of(*windows(held_out, 32)).item()
        print(f"epoch {epoch} held-out loss {held:.3f}")

if __name__ == "__main__":
    main()
