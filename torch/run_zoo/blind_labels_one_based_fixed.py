"""Five-way sensor-fault classifier trained with HuggingFace accelerate.

The records come as rows of (features..., fault_code) where fault_code is the code written in the
maintenance log (1 = normal, 2..5 = fault kinds; code 5 is rare).
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

NUM_CLASSES = 5


def make_records(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 12, generator=g)
    w = torch.randn(12, NUM_CLASSES, generator=torch.Generator().manual_seed(5))
    bias = torch.tensor([1.5, 0.5, 0.5, 0.0, -7.5])
    code = (x @ w + bias).argmax(1) + 1
    return torch.cat([x, code[:, None].float()], 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)

    accelerator = Accelerator(cpu=True)
    rows = make_records(1600, args.seed)
    x, y = rows[:, :-1], rows[:, -1].long() - 1
    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True)

    model = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Linear(64, NUM_CLASSES))
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    model, opt, loader = accelerator.prepare(model, opt, loader)

    step = 0
    for epoch in range(args.epochs):
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            accelerator.backward(loss)
            opt.step()
            step += 1
            if step == 1 or step % 10 == 0:
                accelerator.print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
    print("counts per code:", torch.bincount(y).tolist())


if __name__ == "__main__":
    main()
