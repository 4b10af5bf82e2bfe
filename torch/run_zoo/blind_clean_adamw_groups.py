"""Tiny transformer sequence classifier (does the sequence contain token 0 or 1?) trained with
accelerate and AdamW; weight decay applies to the matrices of the linear layers only, not to biases,
LayerNorm parameters or embeddings."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

VOCAB, SEQ = 32, 12


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.stack([torch.randperm(VOCAB, generator=g)[:SEQ] for _ in range(n)])
    y = ((x == 0) | (x == 1)).any(1).long()
    return x, y


class SeqClassifier(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d)
        self.pos = nn.Embedding(SEQ, d)
        layer = nn.TransformerEncoderLayer(d, 2, 2 * d, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.out = nn.Linear(d, 2)

    def forward(self, x):
        h = self.encoder(self.tok(x) + self.pos(torch.arange(x.shape[1])))
        return self.out(self.norm(h).mean(1))


def param_groups(model, weight_decay):
    decay, no_decay = [], []
    for module in model.modules():
        for name, p in module.named_parameters(recurse=False):
            if isinstance(module, nn.Linear) and name == "weight":
                decay.append(p)
            elif name in ("in_proj_weight",):
                decay.append(p)
            else:
                no_decay.append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    accelerator = Accelerator(cpu=True)

    x, y = make_data(1600, args.seed)
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    model = SeqClassifier()
    groups = param_groups(model, 0.05)
    assert sum(len(gr["params"]) for gr in groups) == len(list(model.parameters()))
    opt = torch.optim.AdamW(groups, lr=2e-3)
    model, opt, loader = accelerator.prepare(model, opt, loader)

    step = 0
    for epoch in range(args.epochs):
        for xb, yb in loader:
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
            opt.zero_grad()
            accelerator.backward(loss)
            opt.step()
            step += 1
            if step % 10 == 0:
                acc = (logits.argmax(1) == yb).float().mean().item()
                accelerator.print(f"epoch {epoch} step {step} loss {loss.item():.4f} batch_acc {acc:.2f}")


if __name__ == "__main__":
    main()
