"""Train a small convolutional classifier on synthetic 12x12 images and keep an exponential
moving average of its weights in a frozen copy (`deepcopy(model).eval()`, no gradients), which
is the one evaluated, under torch.no_grad(), after each epoch."""

import argparse
import copy

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_images(n, seed):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 3, (n,), generator=g)
    images = 0.3 * torch.randn(n, 1, 12, 12, generator=g)
    for i, c in enumerate(labels.tolist()):
        if c == 0:
            images[i, 0, 3:9, 5:7] += 1.0  # a vertical bar
        elif c == 1:
            images[i, 0, 5:7, 3:9] += 1.0  # a horizontal bar
        else:
            images[i, 0, 4:8, 4:8] += 0.6  # a square
    return TensorDataset(images, labels)


def net():
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(16, 3),
    )


@torch.no_grad()
def ema_update(ema, model, decay):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)
    for e, b in zip(ema.buffers(), model.buffers()):
        e.copy_(b)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--decay", type=float, default=0.9)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    train = make_images(640, args.seed)
    test = make_images(160, args.seed + 1000)
    train_loader = DataLoader(train, batch_size=32, shuffle=True)
    test_loader = DataLoader(test, batch_size=80)

    model = net()
    ema = copy.deepcopy(model).eval()
    for p in ema.parameters():
        p.requires_grad_(False)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()

    for epoch in range(args.epochs):
        model.train()
        for step, (x, y) in enumerate(train_loader):
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            ema_update(ema, model, args.decay)
            if step % 5 == 0:
                with torch.no_grad():
                    ema_loss = loss_fn(ema(x), y)
                print(f"epoch {epoch} step {step} loss {loss.item():.3f} ema {ema_loss.item():.3f}")
        correct = 0
        with torch.no_grad():
            for x, y in test_loader:
                correct += (ema(x).argmax(1) == y).sum().item()
        print(f"epoch {epoch} ema test accuracy {correct / len(test):.3f}")


if __name__ == "__main__":
    main()
