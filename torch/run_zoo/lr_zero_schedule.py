"""Classify synthetic 3-channel signals with a small 1-D CNN; the learning rate decays linearly
to zero over the epochs."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_signals(n, length, seed):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 3, (n,), generator=g)
    t = torch.linspace(0, 1, length)
    freq = (y.float() + 1).unsqueeze(1) * 3
    phase = 6.28 * torch.rand(n, 1, generator=g)
    wave = torch.sin(6.28 * freq * t + phase)
    x = wave.unsqueeze(1).repeat(1, 3, 1) + 0.3 * torch.randn(n, 3, length, generator=g)
    return x, y


class SignalNet(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.conv1 = nn.Conv1d(3, 16, kernel_size=5, padding=2)
        self.conv2 = nn.Conv1d(16, 32, kernel_size=5, padding=2)
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = nn.functional.max_pool1d(x, 2)
        x = torch.relu(self.conv2(x))
        return self.fc(self.pool(x).flatten(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = make_signals(384, 64, args.seed)
    train_loader = DataLoader(TensorDataset(x[:320], y[:320]), batch_size=args.batch_size, shuffle=True)
    val_x, val_y = x[320:], y[320:]

    model = SignalNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lr_lambda=lambda epoch: max(0.0, 1.0 - epoch / args.epochs)
    )
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            scheduler.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.5f}")
        model.eval()
        with torch.no_grad():
            acc = (model(val_x).argmax(1) == val_y).float().mean().item()
        print(f"epoch {epoch} val_acc {acc:.3f}")


if __name__ == "__main__":
    main()
