"""Fit a small recurrent language model to a synthetic token stream with plain SGD written by
hand: no torch.optim, the weights moved in place from their gradients, the gradients clipped
and reset with model.zero_grad() before each forward. Batches are time-major (T, B)."""

import argparse
import math

import torch
from torch import nn


def make_corpus(n_tokens, vocab, seed):
    """A stream where each token depends on the one before: learnable, not memorisable."""
    g = torch.Generator().manual_seed(seed)
    table = torch.randint(0, vocab, (vocab, 3), generator=g)
    out = torch.empty(n_tokens, dtype=torch.long)
    out[0] = 0
    choice = torch.randint(0, 3, (n_tokens,), generator=g)
    for i in range(1, n_tokens):
        out[i] = table[out[i - 1], choice[i]]
    return out


def batchify(stream, batch):
    columns = stream.numel() // batch
    return stream[: columns * batch].view(batch, columns).t().contiguous()  # (T, B)


class TinyLM(nn.Module):
    def __init__(self, vocab, width):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.rnn = nn.GRU(width, width)
        self.out = nn.Linear(width, vocab)

    def forward(self, tokens, hidden):
        h, hidden = self.rnn(self.embed(tokens), hidden)
        return self.out(h), hidden


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=2.0)
    parser.add_argument("--clip", type=float, default=0.25)
    parser.add_argument("--bptt", type=int, default=12)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--style", choices=("data", "no_grad"), default="data")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    vocab = 40
    stream = make_corpus(6000, vocab, args.seed)
    train = batchify(stream[:5000], 16)
    held_out = batchify(stream[5000:], 8)
    model = TinyLM(vocab, 48)
    loss_fn = nn.CrossEntropyLoss()

    def evaluate(data):
        model.eval()
        total, count, hidden = 0.0, 0, None
        with torch.no_grad():
            for i in range(0, data.size(0) - 1, args.bptt):
                x, y = data[i:i + args.bptt], data[i + 1:i + 1 + args.bptt]
                x = x[: y.size(0)]
                logits, hidden = model(x, hidden)
                total += loss_fn(logits.view(-1, vocab), y.reshape(-1)).item() * y.numel()
                count += y.numel()
        return total / count

    for epoch in range(args.epochs):
        model.train()
        hidden = None
        for batch, i in enumerate(range(0, train.size(0) - 1, args.bptt)):
            x, y = train[i:i + args.bptt], train[i + 1:i + 1 + args.bptt]
            x = x[: y.size(0)]
            hidden = None if hidden is None else hidden.detach()
            model.zero_grad()
            logits, hidden = model(x, hidden)
            loss = loss_fn(logits.view(-1, vocab), y.reshape(-1))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            if args.style == "data":
                for p in model.parameters():
                    p.data.add_(p.grad, alpha=-args.lr)
            else:
                with torch.no_grad():
                    for p in model.parameters():
                        p -= args.lr * p.grad
            if batch % 10 == 0:
                print(f"epoch {epoch} batch {batch} loss {loss.item():.3f}")
        val = evaluate(held_out)
        print(f"epoch {epoch} held-out loss {val:.3f} ppl {math.exp(val):.1f}")


if __name__ == "__main__":
    main()
