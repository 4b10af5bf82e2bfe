"""Classifier with an exponential moving average (EMA) of its weights.

The EMA model is a deep copy of the trained model with gradients switched off; after every
optimizer step its parameters move a small step toward the live ones (lerp under no_grad) and its
buffers (BatchNorm running statistics) are copied. Each epoch evaluates both the live model and
the EMA copy.
"""
import argparse
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class ModelEMA:
    def __init__(self, model, decay=0.95):
        self.decay = decay
        self.module = copy.deepcopy(model).eval()
        for p in self.module.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        for ema_p, p in zip(self.module.parameters(), model.parameters()):
            ema_p.lerp_(p.detach(), 1.0 - self.decay)
        for ema_b, b in zip(self.module.buffers(), model.buffers()):
            ema_b.copy_(b)


def spirals(n, seed, classes=3, noise=0.25):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, classes, (n,), generator=g)
    t = torch.rand(n, generator=g) * 3.0 + 0.5
    angle = t * 2.0 + y.float() * (2 * torch.pi / classes)
    x = torch.stack([t * angle.cos(), t * angle.sin()], 1) + noise * torch.randn(n, 2, generator=g)
    return x, y


class Net(nn.Module):
    def __init__(self, width=64, classes=3):
        super().__init__()
        self.fc1 = nn.Linear(2, width)
        self.bn1 = nn.BatchNorm1d(width)
        self.fc2 = nn.Linear(width, width)
        self.bn2 = nn.BatchNorm1d(width)
        self.out = nn.Linear(width, classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.fc1(x)))
        x = F.relu(self.bn2(self.fc2(x)))
        return self.out(x)


@torch.no_grad()
def accuracy(model, x, y):
    was_training = model.training
    model.eval()
    acc = (model(x).argmax(1) == y).float().mean().item()
    model.train(was_training)
    return acc


def main():
    parser = argparse.ArgumentParser(description="Train with an EMA of the weights")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--ema-decay", type=float, default=0.95)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, y = spirals(704, args.seed)
    x_train, y_train, x_val, y_val = x[:576], y[:576], x[576:], y[576:]
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=args.batch_size, shuffle=True, drop_last=True)

    model = Net()
    ema = ModelEMA(model, decay=args.ema_decay)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            ema.update(model)
            step += 1
            if step % 6 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        print(f"epoch {epoch}: val acc {accuracy(model, x_val, y_val):.3f}, "
              f"ema val acc {accuracy(ema.module, x_val, y_val):.3f}")


if __name__ == "__main__":
    main()
