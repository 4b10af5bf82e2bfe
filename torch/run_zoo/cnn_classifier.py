"""Classify synthetic 16x16 RGB images of shapes (disc, square, cross) with a small CNN with
batch normalisation and dropout; inputs are normalised with the training set's channel
statistics."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

SIZE = 16


def draw(shape, cx, cy, r):
    yy, xx = torch.meshgrid(torch.arange(SIZE).float(), torch.arange(SIZE).float(), indexing="ij")
    if shape == 0:
        return ((xx - cx) ** 2 + (yy - cy) ** 2 <= r * r).float()
    if shape == 1:
        return (((xx - cx).abs() <= r) & ((yy - cy).abs() <= r)).float()
    return ((((xx - cx).abs() <= r / 3) & ((yy - cy).abs() <= r)) | (((yy - cy).abs() <= r / 3) & ((xx - cx).abs() <= r))).float()


class Shapes(Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.labels = torch.randint(0, 3, (n,), generator=g)
        images = []
        for label in self.labels.tolist():
            cx, cy = (4 + 8 * torch.rand(2, generator=g)).tolist()
            r = 2.5 + 1.5 * torch.rand(1, generator=g).item()
            colour = 0.3 + 0.7 * torch.rand(3, 1, 1, generator=g)
            mask = draw(label, cx, cy, r)
            images.append(colour * mask + 0.15 * torch.rand(3, SIZE, SIZE, generator=g))
        self.images = torch.stack(images)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.images[i], self.labels[i]


class Normalise:
    def __init__(self, images):
        self.mean = images.mean(dim=(0, 2, 3), keepdim=True)[0]
        self.std = images.std(dim=(0, 2, 3), keepdim=True)[0]

    def __call__(self, batch):
        return (batch - self.mean) / self.std


class SmallCNN(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(32 * 4 * 4, classes))

    def forward(self, x):
        return self.classifier(self.features(x))


@torch.no_grad()
def evaluate(model, loader, normalise):
    model.eval()
    correct = sum((model(normalise(x)).argmax(1) == y).sum().item() for x, y in loader)
    return correct / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    train_set, val_set = Shapes(320, args.seed), Shapes(96, args.seed + 1)
    normalise = Normalise(train_set.images)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=48)

    model = SmallCNN()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * len(train_loader))
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for images, labels in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(normalise(images)), labels)
            loss.backward()
            optimizer.step()
            scheduler.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.2e}")
        print(f"epoch {epoch} val_acc {evaluate(model, val_loader, normalise):.3f}")


if __name__ == "__main__":
    main()
