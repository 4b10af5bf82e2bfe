"""Transfer learning, Lightning style: a backbone pretrained on a 10-way task is saved with its
10-way head; a new 3-way model reuses the backbone and gets a freshly initialised head. Only the
backbone's weights are taken from the checkpoint (the old head is dropped on purpose), and the load
is checked so that exactly the new head's keys are missing."""
import argparse
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def make_data(n, seed, classes):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 20, generator=g)
    feats = torch.tanh(x @ torch.randn(20, 16, generator=torch.Generator().manual_seed(8)))
    w = torch.randn(16, classes, generator=torch.Generator().manual_seed(classes))
    return x, (feats @ w).argmax(1)


class Net(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.head = nn.Linear(64, classes)

    def forward(self, x):
        return self.head(self.backbone(x))


class LitFinetune:
    def __init__(self, model, lr=1e-3):
        self.model, self.lr = model, lr

    def configure_optimizers(self):
        return torch.optim.Adam(self.model.parameters(), lr=self.lr)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.model(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return (self.model(x).argmax(1) == y).float().mean().item()


class Trainer:
    def __init__(self, max_epochs):
        self.max_epochs, self.step = max_epochs, 0

    def fit(self, module, train_loader, val_loader):
        opt = module.configure_optimizers()
        for epoch in range(self.max_epochs):
            module.model.train()
            for i, batch in enumerate(train_loader):
                loss = module.training_step(batch, i)
                opt.zero_grad()
                loss.backward()
                opt.step()
                self.step += 1
                if self.step % 10 == 0:
                    print(f"epoch {epoch} step {self.step} loss {loss.item():.4f}")
            module.model.eval()
            with torch.no_grad():
                accs = [module.validation_step(b, i) for i, b in enumerate(val_loader)]
            print(f"epoch {epoch} val_acc {sum(accs) / len(accs):.3f}")


def pretrain(path, seed):
    model = Net(10)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    x, y = make_data(4096, seed + 5, 10)
    for _ in range(150):
        idx = torch.randint(0, len(x), (128,))
        loss = F.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"pretrained 10-way model, loss {loss.item():.4f}")
    torch.save(model.state_dict(), path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    path = os.path.join(tempfile.mkdtemp(), "backbone10.pt")
    pretrain(path, args.seed)

    model = Net(3)
    nn.init.zeros_(model.head.bias)
    nn.init.normal_(model.head.weight, std=0.01)
    state = torch.load(path, map_location="cpu")
    backbone_state = {k: v for k, v in state.items() if not k.startswith("head.")}
    result = model.load_state_dict(backbone_state, strict=False)
    assert sorted(result.missing_keys) == ["head.bias", "head.weight"], result
    assert not result.unexpected_keys, result
    print(f"loaded backbone; newly initialised: {result.missing_keys}")

    x, y = make_data(960, args.seed + 1, 3)
    xv, yv = make_data(256, args.seed + 2, 3)
    Trainer(args.epochs).fit(LitFinetune(model),
                             DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True),
                             DataLoader(TensorDataset(xv, yv), batch_size=128))


if __name__ == "__main__":
    main()
