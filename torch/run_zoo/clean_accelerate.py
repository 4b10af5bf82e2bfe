"""A ring classifier (an MLP) trained with Hugging Face Accelerate.

The loop is the usual Accelerate pattern: build model, optimizer, dataloaders and scheduler,
hand them to `accelerator.prepare`, call `accelerator.backward(loss)` instead of
`loss.backward()`, and gather predictions with `gather_for_metrics` for evaluation.
"""
import argparse

import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch import nn
from torch.utils.data import DataLoader, Dataset


class RingsDataset(Dataset):
    """Points in 2-D labelled by which of three concentric rings they lie on, lifted to 8-D
    with a fixed random rotation plus noise."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.labels = torch.randint(0, 3, (n,), generator=g)
        radius = 1.0 + self.labels.float() + 0.2 * torch.randn(n, generator=g)
        theta = 2 * torch.pi * torch.rand(n, generator=g)
        pts = torch.stack([radius * theta.cos(), radius * theta.sin()], 1)
        lift = torch.linalg.qr(torch.randn(8, 8, generator=torch.Generator().manual_seed(1234)))[0][:2]
        self.features = pts @ lift + 0.05 * torch.randn(n, 8, generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        return {"features": self.features[idx], "labels": self.labels[idx]}


def get_args():
    parser = argparse.ArgumentParser(description="Train a ring classifier with Accelerate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--warmup-steps", type=int, default=5)
    return parser.parse_args()


def main():
    args = get_args()
    accelerator = Accelerator()
    set_seed(args.seed)

    train_ds = RingsDataset(480, args.seed)
    eval_ds = RingsDataset(160, args.seed + 100)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True)
    eval_dl = DataLoader(eval_ds, batch_size=64)

    model = nn.Sequential(
        nn.Linear(8, 64), nn.SiLU(),
        nn.Linear(64, 64), nn.SiLU(),
        nn.Linear(64, 3),
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    total_steps = args.epochs * len(train_dl)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda step: min(1.0, (step + 1) / args.warmup_steps) * max(0.1, 1 - step / total_steps),
    )
    loss_fn = nn.CrossEntropyLoss()

    model, optimizer, train_dl, eval_dl, scheduler = accelerator.prepare(
        model, optimizer, train_dl, eval_dl, scheduler
    )

    global_step = 0
    for epoch in range(args.epochs):
        model.train()
        for batch in train_dl:
            logits = model(batch["features"])
            loss = loss_fn(logits, batch["labels"])
            accelerator.backward(loss)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            global_step += 1
            if global_step % 5 == 0:
                accelerator.print(f"epoch {epoch} step {global_step} loss {loss.item():.4f}")

        model.eval()
        correct, count = 0, 0
        for batch in eval_dl:
            with torch.no_grad():
                logits = model(batch["features"])
            preds, refs = accelerator.gather_for_metrics((logits.argmax(-1), batch["labels"]))
            correct += (preds == refs).sum().item()
            count += refs.numel()
        accelerator.print(f"epoch {epoch} eval accuracy {correct / count:.3f}")

    accelerator.end_training()


if __name__ == "__main__":
    main()
