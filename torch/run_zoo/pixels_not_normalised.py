"""Classify synthetic 8-bit grayscale images (16x16, ten classes: a bright bar at one of ten
positions on a noisy background) with a small MLP."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

CLASSES = 10
SIZE = 16


class BarImages(Dataset):
    """uint8 images as a camera or a PNG decoder gives them, with integer labels."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.labels = torch.randint(0, CLASSES, (n,), generator=g)
        noise = torch.randint(0, 120, (n, SIZE, SIZE), generator=g)
        images = noise.clone()
        for i, label in enumerate(self.labels.tolist()):
            if label < 5:
                images[i, :, 3 * label : 3 * label + 2] += 130
            else:
                images[i, 3 * (label - 5) : 3 * (label - 5) + 2, :] += 130
        self.images = images.clamp(0, 255).to(torch.uint8)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        image = self.images[i].float()
        return image.unsqueeze(0), self.labels[i]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    train_loader = DataLoader(BarImages(320, args.seed), batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(BarImages(128, args.seed + 1), batch_size=128)

    model = nn.Sequential(nn.Flatten(), nn.Linear(SIZE * SIZE, 128), nn.ReLU(), nn.Linear(128, CLASSES))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for images, labels in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(images), labels)
            loss.backward()
            optimizer.step()
            step += 1
            if step == 1 or step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        model.eval()
        with torch.no_grad():
            images, labels = next(iter(val_loader))
            acc = (model(images).argmax(1) == labels).float().mean().item()
        print(f"epoch {epoch} val_acc {acc:.3f}")


if __name__ == "__main__":
    main()
