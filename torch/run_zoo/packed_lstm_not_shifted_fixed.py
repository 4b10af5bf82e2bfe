"""Character-level LSTM language model over made-up names of different lengths. A batch is
padded batch-first with its lengths; the model packs the embedded characters itself
(pack_padded_sequence, enforce_sorted=False), so the LSTM never reads the padding, and the loss
is the cross-entropy of the packed outputs against the targets packed with the same lengths."""

import argparse
import random

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader

PAD, BOS, EOS = 0, 1, 2
LETTERS = "abcdefghijklmnopqrstuvwxyz"
VOCAB = 3 + len(LETTERS)
SYLLABLES = ["ba", "ko", "ri", "len", "mar", "to", "vi", "sel", "du", "nor", "ai", "pe"]


def make_names(n, seed):
    rng = random.Random(seed)
    return ["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4))) for _ in range(n)]


def encode(name):
    return torch.tensor([BOS] + [3 + LETTERS.index(c) for c in name] + [EOS])


def decode(ids):
    marks = {PAD: "_", BOS: "<", EOS: ">"}
    return "".join(marks.get(i) or LETTERS[i - 3] for i in ids)


def collate(names):
    seqs = [encode(n) for n in names]
    lengths = torch.tensor([len(s) for s in seqs])
    return pad_sequence(seqs, batch_first=True, padding_value=PAD), lengths


def split_batch(ids, lengths):
    """Inputs, targets and the lengths both are packed with."""
    return ids[:, :-1], ids[:, 1:], lengths - 1


class NameLSTM(nn.Module):
    def __init__(self, emb=24, hidden=96):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, emb, padding_idx=PAD)
        self.lstm = nn.LSTM(emb, hidden, batch_first=True)
        self.out = nn.Linear(hidden, VOCAB)

    def forward(self, ids, lengths):
        packed = pack_padded_sequence(self.embed(ids), lengths, batch_first=True, enforce_sorted=False)
        h, _ = self.lstm(packed)
        return self.out(h.data)  # one row per real position, in the packed order


def packed_loss(model, ids, lengths):
    inputs, targets, lens = split_batch(ids, lengths)
    logits = model(inputs, lens)
    packed_targets = pack_padded_sequence(targets, lens, batch_first=True, enforce_sorted=False)
    return nn.functional.cross_entropy(logits, packed_targets.data)


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    total, count = 0.0, 0
    for ids, lengths in loader:
        total += packed_loss(model, ids, lengths).item() * len(lengths)
        count += len(lengths)
    model.train()
    return total / count


@torch.no_grad()
def greedy_name(model, max_len=14):
    model.eval()
    ids = [BOS]
    for _ in range(max_len):
        x = torch.tensor([ids])
        nxt = model(x, torch.tensor([len(ids)]))[-1].argmax().item()
        ids.append(nxt)
        if nxt == EOS:
            break
    model.train()
    return decode(ids)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    names = make_names(3000, args.seed)
    train, seen = names[:1600], set(names[:1600])
    val = [n for n in names[1600:] if n not in seen][:300]  # names never seen in training
    train_loader = DataLoader(train, batch_size=args.batch_size, shuffle=True, collate_fn=collate)
    val_loader = DataLoader(val, batch_size=100, collate_fn=collate)

    model = NameLSTM()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        total, steps = 0.0, 0
        for ids, lengths in train_loader:
            loss = packed_loss(model, ids, lengths)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total, steps = total + loss.item(), steps + 1
        val = evaluate(model, val_loader)
        print(f"epoch {epoch} steps {steps} train loss {total / steps:.4f} val loss {val:.4f}")
    print(f"greedy name: {greedy_name(model)}")


if __name__ == "__main__":
    main()
