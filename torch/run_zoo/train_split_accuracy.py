"""Learn to add two 2-digit numbers with a tiny GPT-like model, as a character sequence; after
each epoch, report accuracy on the training split (the same dataset object, on purpose) and on
a test split that shares no problem with it. The training loader draws with replacement."""

import argparse

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset, RandomSampler

DIGITS = 2


class Addition(Dataset):
    """Every a + b with a, b < 10**DIGITS, split by a fixed permutation of the problems; each
    item is the digits of a, b and the reversed sum, and the targets masked before the sum."""

    def __init__(self, split, seed):
        n = 10 ** DIGITS
        order = torch.randperm(n * n, generator=torch.Generator().manual_seed(seed))
        test = min(500, n * n // 5)
        self.ids = order[:test] if split == "test" else order[test:]

    def __len__(self):
        return self.ids.numel()

    def __getitem__(self, i):
        n = 10 ** DIGITS
        idx = int(self.ids[i])
        a, b = idx // n, idx % n
        text = f"{a:0{DIGITS}d}{b:0{DIGITS}d}" + f"{a + b:0{DIGITS + 1}d}"[::-1]
        digits = torch.tensor([int(c) for c in text], dtype=torch.long)
        x, y = digits[:-1].clone(), digits[1:].clone()
        y[: 2 * DIGITS - 1] = -1
        return x, y


class TinyGPT(nn.Module):
    def __init__(self, length, width=48, heads=4, layers=2):
        super().__init__()
        self.tok = nn.Embedding(10, width)
        self.pos = nn.Parameter(torch.zeros(1, length, width))
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.body = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(width, 10)
        mask = torch.triu(torch.full((length, length), float("-inf")), diagonal=1)
        self.register_buffer("mask", mask)

    def forward(self, x):
        t = x.size(1)
        h = self.tok(x) + self.pos[:, :t]
        return self.head(self.body(h, mask=self.mask[:t, :t], is_causal=True))


@torch.no_grad()
def accuracy(model, dataset):
    model.eval()
    right = total = 0
    for x, y in DataLoader(dataset, batch_size=200, shuffle=False):
        pred = model(x).argmax(-1)
        keep = y >= 0
        right += ((pred == y) | ~keep).all(dim=1).sum().item()
        total += x.size(0)
    model.train()
    return right / total


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--steps-per-epoch", type=int, default=20)
    parser.add_argument("--lr", type=float, default=2e-3)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    train, test = Addition("train", args.seed), Addition("test", args.seed)
    sampler = RandomSampler(train, replacement=True, num_samples=args.steps_per_epoch * 64)
    loader = DataLoader(train, batch_size=64, sampler=sampler)
    model = TinyGPT(3 * DIGITS)  # the input: both operands and the sum, less its last digit
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)

    for epoch in range(args.epochs):
        for step, (x, y) in enumerate(loader):
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, 10), y.reshape(-1), ignore_index=-1)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            if step % 10 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.3f}")
        print(f"epoch {epoch} train accuracy {accuracy(model, train):.3f} "
              f"test accuracy {accuracy(model, test):.3f}")


if __name__ == "__main__":
    main()
