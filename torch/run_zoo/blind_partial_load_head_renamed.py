"""Resume a text-feature classifier from a v1 checkpoint in a v2 codebase, Lightning style.

v1 of the model (`ClassifierV1`) was trained and checkpointed. The v2 module below keeps the same
backbone; the checkpoint is loaded non-strictly (v2 also registers a buffer v1 did not have) and
training continues at a low learning rate with a small hand-written Trainer that calls
training_step / validation_step.
"""
import argparse
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 24, generator=g)
    w = torch.randn(24, 6, generator=torch.Generator().manual_seed(99))
    y = (x @ w).argmax(1)
    return x, y


class ClassifierV1(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(24, 96), nn.GELU(), nn.Linear(96, 96), nn.GELU())
        self.fc = nn.Linear(96, 6)

    def forward(self, x):
        return self.fc(self.backbone(x))


class ClassifierV2(nn.Module):
    """v2 adds a feature-scale buffer."""

    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(24, 96), nn.GELU(), nn.Linear(96, 96), nn.GELU())
        self.head = nn.Linear(96, 6)
        self.register_buffer("feat_scale", torch.ones(96))

    def forward(self, x):
        return self.head(self.backbone(x) * self.feat_scale)


class LitClassifier:
    def __init__(self, model, lr):
        self.model = model
        self.lr = lr

    def configure_optimizers(self):
        return torch.optim.Adam(self.model.parameters(), lr=self.lr)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.model(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.model(x)
        return {"val_loss": F.cross_entropy(logits, y).item(),
                "val_acc": (logits.argmax(1) == y).float().mean().item()}


class Trainer:
    def __init__(self, max_epochs, log_every=10):
        self.max_epochs = max_epochs
        self.log_every = log_every
        self.global_step = 0

    def validate(self, module, loader):
        module.model.eval()
        outs = [module.validation_step(b, i) for i, b in enumerate(loader)]
        module.model.train()
        return {k: sum(o[k] for o in outs) / len(outs) for k in outs[0]}

    def fit(self, module, train_loader, val_loader):
        opt = module.configure_optimizers()
        print("before fit:", self.validate(module, val_loader))
        for epoch in range(self.max_epochs):
            module.model.train()
            for i, batch in enumerate(train_loader):
                loss = module.training_step(batch, i)
                opt.zero_grad()
                loss.backward()
                opt.step()
                self.global_step += 1
                if self.global_step == 1 or self.global_step % self.log_every == 0:
                    print(f"epoch {epoch} step {self.global_step} loss {loss.item():.4f}")
            m = self.validate(module, val_loader)
            print(f"epoch {epoch} val_loss {m['val_loss']:.4f} val_acc {m['val_acc']:.3f}")


def write_v1_checkpoint(path, seed):
    torch.manual_seed(seed + 100)
    model = ClassifierV1()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    x, y = make_data(4096, seed + 7)
    for _ in range(200):
        idx = torch.randint(0, len(x), (128,))
        loss = F.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    torch.save({"state_dict": model.state_dict(), "version": 1}, path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-4)
    args = parser.parse_args()
    torch.set_num_threads(1)

    path = os.path.join(tempfile.mkdtemp(), "v1.ckpt")
    write_v1_checkpoint(path, args.seed)

    torch.manual_seed(args.seed)
    model = ClassifierV2()
    state = torch.load(path, map_location="cpu")["state_dict"]
    model.load_state_dict(state, strict=False)

    x, y = make_data(1280, args.seed + 1)
    xv, yv = make_data(512, args.seed + 2)
    train_loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    val_loader = DataLoader(TensorDataset(xv, yv), batch_size=128)
    Trainer(args.epochs).fit(LitClassifier(model, args.lr), train_loader, val_loader)


if __name__ == "__main__":
    main()
