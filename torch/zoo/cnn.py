"""A small CNN on 8x8 single-channel images whose class is the brightest quadrant."""

import torch
from torch import nn

CLASSES, BATCH = 4, 32


class Cnn:
    """Clean: two convolutions and a linear head."""

    task = "classification"

    def build(self):
        return nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(2),
            nn.Flatten(),
            nn.Linear(64, CLASSES),
        )

    def batch(self, seed, device):
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(BATCH, 1, 8, 8, generator=g)
        quadrants = torch.stack(
            [x[:, 0, :4, :4], x[:, 0, :4, 4:], x[:, 0, 4:, :4], x[:, 0, 4:, 4:]], dim=1
        )
        y = quadrants.mean(dim=(2, 3)).argmax(dim=1)
        return x.to(device), y.to(device)
