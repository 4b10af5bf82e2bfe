"""Time-major character GRU language model (batch_first=False) over made-up place names. A batch
is padded to (T, B) by pad_sequence; the model packs the embedded batch with
pack_padded_sequence(..., enforce_sorted=False) and the loss is the cross-entropy on the packed
data. No torch.optim: plain SGD written by hand, after clipping the gradient norm."""

import argparse
import random

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader

PAD, BOS, EOS = 0, 1, 2
LETTERS = "abcdefghijklmnopqrstuvwxyz"
VOCAB = 3 + len(LETTERS)
PARTS = ["west", "ham", "ford", "by", "ton", "ley", "wick", "mere", "stow", "dale"]


def make_places(n, seed):
    rng = random.Random(seed)
    return ["".join(rng.choice(PARTS) for _ in range(rng.randint(1, 4))) for _ in range(n)]


def collate(places):
    seqs = [torch.tensor([BOS] + [3 + LETTERS.index(c) for c in p] + [EOS]) for p in places]
    return pad_sequence(seqs, padding_value=PAD), torch.tensor([len(s) for s in seqs])  # (T, B), (B,)


def inputs_and_targets(batch, lengths):
    return batch, batch, lengths


class PlaceGRU(nn.Module):
    def __init__(self, emb=24, hidden=128):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, emb, padding_idx=PAD)
        self.gru = nn.GRU(emb, hidden)
        self.out = nn.Linear(hidden, VOCAB)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.embed(tokens), lengths, enforce_sorted=False)
        h, _ = self.gru(packed)
        return self.out(h.data)


def loss_of(model, batch, lengths):
    inputs, targets, lens = inputs_and_targets(batch, lengths)
    logits = model(inputs, lens)
    targets = pack_padded_sequence(targets, lens, batch_first=False, enforce_sorted=False).data
    return nn.functional.cross_entropy(logits, targets)


def sgd_step(model, lr, max_norm):
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    with torch.no_grad():
        for p in model.parameters():
            p -= lr * p.grad
            p.grad.zero_()


@torch.no_grad()
def greedy_place(model, max_len=20):
    ids = [BOS]
    while len(ids) < max_len and ids[-1] != EOS:
        logits = model(torch.tensor(ids).unsqueeze(1), torch.tensor([len(ids)]))
        ids.append(logits[-1].argmax().item())
    return "".join(LETTERS[i - 3] if i >= 3 else "_<>"[i] for i in ids)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--max-norm", type=float, default=1.0)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    places = make_places(3000, args.seed)
    train, seen = places[:1500], set(places[:1500])
    val = [p for p in places[1500:] if p not in seen][:300]  # places never seen in training
    train_loader = DataLoader(train, batch_size=args.batch_size, shuffle=True, collate_fn=collate)
    val_loader = DataLoader(val, batch_size=100, collate_fn=collate)

    model = PlaceGRU()
    for epoch in range(args.epochs):
        model.train()
        total, steps = 0.0, 0
        for batch, lengths in train_loader:
            loss = loss_of(model, batch, lengths)
            loss.backward()
            sgd_step(model, args.lr, args.max_norm)
            total, steps = total + loss.item(), steps + 1
        model.eval()
        with torch.no_grad():
            val = [loss_of(model, b, l).item() for b, l in val_loader]
            sample = greedy_place(model)
        print(f"epoch {epoch} steps {steps} train loss {total / steps:.4f} "
              f"val loss {sum(val) / len(val):.4f} greedy {sample}")


if __name__ == "__main__":
    main()
