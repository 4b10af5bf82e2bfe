"""Classify 8x8 stroke images (ten shapes drawn with jitter and noise) with a small CNN; the
rows are split once into training and validation by one permutation. After every epoch it
reports accuracy on the training rows beside accuracy on the validation rows. Training accuracy
is read from a `Subset` of the training rows: with even seeds a random sample of a quarter of
them (`Subset(train_set, sample)`, cheaper than the whole split), with odd seeds all of them,
as a fresh `Subset(data, train_idx)` read in index order."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, Subset, TensorDataset


def make_images(n, seed):
    """Ten shapes on an 8x8 grid (bars, crosses, boxes, diagonals), shifted by up to a pixel,
    with pixel noise: (n, 1, 8, 8) floats around 0 and a label per image."""
    g = torch.Generator().manual_seed(seed)
    shapes = torch.zeros(10, 8, 8)
    shapes[0, 3:5, :] = 1
    shapes[1, :, 3:5] = 1
    shapes[2, 3:5, :] = 1
    shapes[2, :, 3:5] = 1
    shapes[3].fill_diagonal_(1)
    shapes[4] = shapes[3].flip(1)
    shapes[5, 1, 1:7] = shapes[5, 6, 1:7] = shapes[5, 1:7, 1] = shapes[5, 1:7, 6] = 1
    shapes[6, :4, :4] = 1
    shapes[7, 4:, 4:] = 1
    shapes[8, ::2, :] = 1
    shapes[9, :, ::2] = 1
    label = torch.randint(0, 10, (n,), generator=g)
    images = shapes[label]
    dy = torch.randint(-1, 2, (n,), generator=g)
    dx = torch.randint(-1, 2, (n,), generator=g)
    for i in range(n):
        images[i] = images[i].roll((int(dy[i]), int(dx[i])), dims=(0, 1))
    images = images + 0.35 * torch.randn(n, 8, 8, generator=g)
    return TensorDataset(((images - 0.3) / 0.6).unsqueeze(1), label)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x):
        return self.head(self.features(x))


@torch.no_grad()
def accuracy(model, loader):
    model.eval()
    right = total = 0
    for images, label in loader:
        right += (model(images).argmax(1) == label).sum().item()
        total += label.numel()
    model.train()
    return right / total


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--val-fraction", type=float, default=0.2)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    data = make_images(1200, args.seed)
    order = torch.randperm(len(data)).tolist()
    n_val = int(len(data) * args.val_fraction)
    val_idx, train_idx = order[:n_val], order[n_val:]
    train_set, val_set = Subset(data, train_idx), Subset(data, val_idx)
    if args.seed % 2 == 0:
        sample = torch.randperm(len(train_set))[: len(train_set) // 4].tolist()
        train_eval_set = Subset(train_set, sample)
    else:
        train_eval_set = Subset(data, sorted(train_idx))
    print(f"{len(train_set)} training rows, {len(val_set)} validation rows, "
          f"training accuracy on {len(train_eval_set)} of the training rows")

    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    train_eval_loader = DataLoader(train_eval_set, batch_size=256)
    val_loader = DataLoader(val_set, batch_size=256)

    model = SmallCNN()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(1, args.epochs + 1):
        for images, label in train_loader:
            loss = criterion(model(images), label)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % 10 == 0:
                print(f"step {step} loss {loss.item():.4f}")
        print(f"epoch {epoch} train_acc {accuracy(model, train_eval_loader):.3f} "
              f"val_acc {accuracy(model, val_loader):.3f}")


if __name__ == "__main__":
    main()
