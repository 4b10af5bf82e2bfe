"""Small conv net on synthetic 1-channel 16x16 textures (stripes at four orientations), trained
with bfloat16 autocast on the CPU. Weights, gradients and optimizer state stay float32; only the
forward (and the loss) runs under autocast, so no GradScaler is needed."""

import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

SIZE = 16


def textures(n, seed):
    g = torch.Generator().manual_seed(seed)
    yy, xx = torch.meshgrid(torch.arange(SIZE).float(), torch.arange(SIZE).float(), indexing="ij")
    labels = torch.randint(0, 4, (n,), generator=g)
    angles = labels.float() * (torch.pi / 4) + 0.15 * torch.randn(n, generator=g)
    freq = 0.6 + 0.4 * torch.rand(n, generator=g)
    phase = 2 * torch.pi * torch.rand(n, generator=g)
    proj = torch.cos(angles)[:, None, None] * xx + torch.sin(angles)[:, None, None] * yy
    img = torch.sin(freq[:, None, None] * proj + phase[:, None, None])
    img = img + 0.5 * torch.randn(n, SIZE, SIZE, generator=g)
    return img.unsqueeze(1), labels


class SmallConvNet(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    images, labels = textures(512 + 128, args.seed)
    mean, std = images[:512].mean(), images[:512].std()
    images = (images - mean) / std
    train = DataLoader(TensorDataset(images[:512], labels[:512]), batch_size=args.batch_size, shuffle=True)
    test_x, test_y = images[512:], labels[512:]

    model = SmallConvNet()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-2)
    amp = dict(device_type="cpu", dtype=torch.bfloat16)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for x, y in train:
            with torch.autocast(**amp):
                out = model(x)
                loss = F.cross_entropy(out, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            if step % 8 == 0:
                print(f"step {step:3d} | loss {loss.item():.4f} | out dtype {out.dtype}")
        model.eval()
        with torch.no_grad(), torch.autocast(**amp):
            acc = (model(test_x).argmax(1) == test_y).float().mean().item()
        print(f"epoch {epoch} | test acc {acc:.3f}")


if __name__ == "__main__":
    main()
