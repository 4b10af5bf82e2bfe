"""The MLP classifier and its buggy twins: each twin is the clean model with one small change."""

import torch
from torch import nn

FEATURES, HIDDEN, CLASSES, BATCH = 16, 64, 4, 32


def rule_batch(seed, device, n=BATCH, classes=CLASSES):
    """Features with a learnable rule: the class is the largest of the first `classes` features."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, FEATURES, generator=g)
    y = x[:, :classes].argmax(dim=1)
    return x.to(device), y.to(device)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(FEATURES, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, HIDDEN)
        self.head = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = torch.relu(self.fc2(h))
        return self.head(h)


class Mlp:
    """Clean: a three-layer MLP on a batch it can memorise."""

    task = "classification"

    def build(self):
        return Net()

    def batch(self, seed, device):
        return rule_batch(seed, device)


class SoftmaxNet(Net):
    def forward(self, x):
        return torch.softmax(super().forward(x), dim=-1)  # the bug: CrossEntropyLoss softmaxes again


class SoftmaxBeforeCrossEntropy(Mlp):
    """Twin: forward returns softmax probabilities and the cross-entropy applies its own on top."""

    def build(self):
        return SoftmaxNet()


class FrozenLayer(Mlp):
    """Twin: fc2 was left with requires_grad=False (a freeze meant for another experiment)."""

    def build(self):
        net = Net()
        net.fc2.requires_grad_(False)  # the bug
        return net


class DetachedNet(Net):
    def forward(self, x):
        h = torch.relu(self.fc1(x)).detach()  # the bug: nothing before this point learns
        h = torch.relu(self.fc2(h))
        return self.head(h)


class Detached(Mlp):
    """Twin: a .detach() in the forward cuts fc1 off from the loss."""

    def build(self):
        return DetachedNet()


class DeadRelu(Mlp):
    """Twin: fc1's bias starts at -10, so every ReLU after it outputs 0 and passes no gradient."""

    def build(self):
        net = Net()
        with torch.no_grad():
            net.fc1.bias.fill_(-10.0)  # the bug
        return net


class Imbalanced(Mlp):
    """Twin: class 0 outnumbers every other class 101:1 in the batch."""

    def batch(self, seed, device):
        x, _ = rule_batch(seed, device, n=104)
        y = torch.zeros(104, dtype=torch.long)
        y[101:] = torch.tensor([1, 2, 3])  # the bug: 101 zeros, one of each other class
        return x, y.to(device)
