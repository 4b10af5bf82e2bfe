"""Character GRU over made-up words, written as a module with training_step / validation_step /
configure_optimizers and a small trainer that runs them. The dataset hands out each word as an
(input, target) pair of character ids; the module packs a batch's inputs itself with
pack_sequence (enforce_sorted=False) and the GRU reads the PackedSequence; the loss is taken on
the packed data."""

import argparse
import random

import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence, pack_sequence
from torch.utils.data import DataLoader, Dataset

BOS, EOS = 0, 1
LETTERS = "abcdefghijklmnopqrstuvwxyz"
VOCAB = 2 + len(LETTERS)
SYLLABLES = ["tra", "mo", "ne", "lis", "ka", "dor", "vu", "sei", "pan", "gi", "ro", "bel"]


def make_words(n, seed):
    rng = random.Random(seed)
    return ["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4))) for _ in range(n)]


class WordPairs(Dataset):
    """Each word as (ids[:-1], ids[1:]): the target of a position is the character after it."""

    def __init__(self, words):
        self.seqs = [torch.tensor([BOS] + [2 + LETTERS.index(c) for c in w] + [EOS]) for w in words]

    def __len__(self):
        return len(self.seqs)

    def __getitem__(self, i):
        return self.seqs[i][:-1], self.seqs[i][1:]


def as_list(batch):
    return batch  # a batch stays a list of (input, target) pairs of different lengths


class CharGRU(nn.Module):
    def __init__(self, lr, emb=16, hidden=64):
        super().__init__()
        self.lr = lr
        self.embed = nn.Embedding(VOCAB, emb)
        self.gru = nn.GRU(emb, hidden)
        self.head = nn.Linear(hidden, VOCAB)

    def forward(self, packed_ids):
        emb = PackedSequence(self.embed(packed_ids.data), packed_ids.batch_sizes,
                             packed_ids.sorted_indices, packed_ids.unsorted_indices)
        out, _ = self.gru(emb)
        return self.head(out.data)

    def pack_pairs(self, batch):
        inputs = pack_sequence([x[:-1] for x, _ in batch], enforce_sorted=False)
        targets = pack_sequence([y[1:] for _, y in batch], enforce_sorted=False)
        return inputs, targets

    def training_step(self, batch):
        inputs, targets = self.pack_pairs(batch)
        return nn.functional.cross_entropy(self(inputs), targets.data)

    def validation_step(self, batch):
        inputs, targets = self.pack_pairs(batch)
        return nn.functional.cross_entropy(self(inputs), targets.data)

    @torch.no_grad()
    def generate(self, max_len=16):
        ids = [BOS]
        while len(ids) < max_len and ids[-1] != EOS:
            ids.append(self(pack_sequence([torch.tensor(ids)]))[-1].argmax().item())
        return "".join(LETTERS[i - 2] if i >= 2 else "<>"[i] for i in ids)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


class Trainer:
    def __init__(self, max_epochs):
        self.max_epochs = max_epochs

    def fit(self, module, train_loader, val_loader):
        optimizer = module.configure_optimizers()
        for epoch in range(self.max_epochs):
            module.train()
            total, steps = 0.0, 0
            for batch in train_loader:
                loss = module.training_step(batch)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total, steps = total + loss.item(), steps + 1
            module.eval()
            with torch.no_grad():
                val = [module.validation_step(b).item() for b in val_loader]
            print(f"epoch {epoch} steps {steps} train loss {total / steps:.4f} "
                  f"val loss {sum(val) / len(val):.4f} greedy word {module.generate()}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    words = make_words(3000, args.seed)
    train, seen = words[:1500], set(words[:1500])
    val = [w for w in words[1500:] if w not in seen][:300]  # words never seen in training
    train_loader = DataLoader(WordPairs(train), batch_size=args.batch_size, shuffle=True,
                              collate_fn=as_list)
    val_loader = DataLoader(WordPairs(val), batch_size=100, collate_fn=as_list)
    Trainer(args.epochs).fit(CharGRU(args.lr), train_loader, val_loader)


if __name__ == "__main__":
    main()
