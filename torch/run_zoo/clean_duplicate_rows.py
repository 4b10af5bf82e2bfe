"""Short-review sentiment classifier on templated sentences.

The sentences come from a few templates over a small vocabulary, so the same sentence text
occurs many times (as short reviews do: "great product", "works fine"). The train/validation
split is a random split of row indices: no row is in both, although many validation sentences
also occur, as separate rows, in training.
"""
import argparse
import collections
import random

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

POSITIVE = ["great", "good", "excellent", "lovely", "solid"]
NEGATIVE = ["bad", "poor", "awful", "broken", "cheap"]
NOUNS = ["product", "phone", "case", "charger", "cable", "lamp"]
TEMPLATES = [
    "{adj} {noun}",
    "the {noun} is {adj}",
    "really {adj} {noun}",
    "{adj} {noun} would buy again",
    "{adj} {noun} not worth it",
]
PAD, UNK = "<pad>", "<unk>"


def generate_reviews(n, rng):
    rows = []
    for _ in range(n):
        positive = rng.random() < 0.5
        adj = rng.choice(POSITIVE if positive else NEGATIVE)
        template = rng.choice(TEMPLATES)
        text = template.format(adj=adj, noun=rng.choice(NOUNS))
        # one review in ten is labelled against its adjective (sarcasm, mistakes)
        label = int(positive) if rng.random() > 0.1 else int(not positive)
        rows.append((text, label))
    return rows


class Vocab:
    def __init__(self, texts):
        counts = collections.Counter(w for t in texts for w in t.split())
        self.itos = [PAD, UNK] + sorted(counts)
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    def encode(self, text):
        return [self.stoi.get(w, 1) for w in text.split()]

    def __len__(self):
        return len(self.itos)


class Reviews(Dataset):
    def __init__(self, rows, vocab):
        self.rows = rows
        self.vocab = vocab

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        text, label = self.rows[i]
        return torch.tensor(self.vocab.encode(text)), label


def collate(batch):
    seqs, labels = zip(*batch)
    padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=0)
    return padded, torch.tensor(labels)


class MeanPoolClassifier(nn.Module):
    def __init__(self, vocab_size, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, 2))

    def forward(self, tokens):
        mask = (tokens != 0).unsqueeze(-1).float()
        pooled = (self.emb(tokens) * mask).sum(1) / mask.sum(1).clamp(min=1)
        return self.mlp(pooled)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--val-fraction", type=float, default=0.2)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    rows = generate_reviews(700, rng)

    indices = list(range(len(rows)))
    rng.shuffle(indices)
    n_val = int(args.val_fraction * len(rows))
    val_rows = [rows[i] for i in indices[:n_val]]
    train_rows = [rows[i] for i in indices[n_val:]]
    train_texts = {t for t, _ in train_rows}
    seen = sum(t in train_texts for t, _ in val_rows)
    print(f"{len(train_rows)} train rows ({len(train_texts)} distinct texts), {len(val_rows)} val rows; "
          f"{seen} val texts also occur in train")

    vocab = Vocab(t for t, _ in train_rows)
    train_loader = DataLoader(Reviews(train_rows, vocab), batch_size=args.batch_size, shuffle=True, collate_fn=collate)
    val_loader = DataLoader(Reviews(val_rows, vocab), batch_size=128, collate_fn=collate)

    model = MeanPoolClassifier(len(vocab))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for tokens, labels in train_loader:
            loss = loss_fn(model(tokens), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % 6 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for tokens, labels in val_loader:
                correct += (model(tokens).argmax(1) == labels).sum().item()
                total += len(labels)
        print(f"epoch {epoch} val_acc {correct / total:.3f}")


if __name__ == "__main__":
    main()
