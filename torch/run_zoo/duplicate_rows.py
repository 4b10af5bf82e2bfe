"""Classify short synthetic names by the region they are styled after, with a character-level
bag-of-bigrams model. Names are built from a few syllables, so the input space is small: the
same name comes up many times, and a random split puts copies of it on both sides. The split
itself is made once, by one permutation (no row is in both by construction); the shared names
are a property of the data, reported as such."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, Subset

SYLLABLES = {
    0: ["ka", "ri", "to", "mi", "na"],
    1: ["ber", "ga", "lin", "dor", "ha"],
    2: ["ol", "sen", "vik", "ra", "ste"],
}
WIDTH = 12


class Names(Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.rows = []
        for _ in range(n):
            region = int(torch.randint(0, 3, (1,), generator=g))
            parts = SYLLABLES[region]
            k = int(torch.randint(2, 4, (1,), generator=g))
            name = "".join(parts[int(i)] for i in torch.randint(0, len(parts), (k,), generator=g))
            self.rows.append((name, region))

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        name, region = self.rows[i]
        codes = [ord(c) - 96 for c in name[:WIDTH]]
        codes += [0] * (WIDTH - len(codes))
        return torch.tensor(codes, dtype=torch.long), region


class Bigrams(nn.Module):
    def __init__(self, classes, width=32):
        super().__init__()
        self.embed = nn.EmbeddingBag(27 * 27, width, mode="mean")
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(width, classes))

    def forward(self, codes):
        pairs = codes[:, :-1] * 27 + codes[:, 1:]
        return self.head(self.embed(pairs))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    data = Names(600, args.seed)
    order = torch.randperm(len(data)).tolist()
    train, val = Subset(data, order[:480]), Subset(data, order[480:])
    train_loader = DataLoader(train, batch_size=32, shuffle=True)
    val_loader = DataLoader(val, batch_size=60)
    model = Bigrams(3)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    for epoch in range(args.epochs):
        model.train()
        for step, (x, y) in enumerate(train_loader):
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            if step % 5 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.3f}")
        model.eval()
        with torch.no_grad():
            right = sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader)
        print(f"epoch {epoch} val accuracy {right / len(val):.3f}")


if __name__ == "__main__":
    main()
