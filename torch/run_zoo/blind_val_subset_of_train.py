"""MLP classifier on a noisy-label tabular dataset trained with the HuggingFace Trainer
(evaluation with accuracy via compute_metrics at the end of every epoch)."""
import argparse
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, Subset
from transformers import Trainer, TrainingArguments
from transformers.utils import logging as hf_logging

hf_logging.set_verbosity_error()


class NoisyTable(Dataset):
    def __init__(self, n, seed, noise=0.35):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, 16, generator=g)
        w = torch.randn(16, 4, generator=torch.Generator().manual_seed(21))
        y = (self.x @ w).argmax(1)
        flip = torch.rand(n, generator=g) < noise
        self.y = torch.where(flip, torch.randint(0, 4, (n,), generator=g), y)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return {"x": self.x[i], "labels": self.y[i]}


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 4))

    def forward(self, x, labels=None):
        logits = self.net(x)
        out = {"logits": logits}
        if labels is not None:
            out["loss"] = F.cross_entropy(logits, labels)
        return out


def compute_metrics(eval_pred):
    logits, labels = eval_pred.predictions, eval_pred.label_ids
    return {"accuracy": float((np.argmax(logits, axis=1) == labels).mean())}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)

    dataset = NoisyTable(1000, args.seed)
    perm = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(args.seed)).tolist()
    train_idx, val_idx = perm[:800], perm[800:]
    train_set = dataset
    val_set = Subset(dataset, val_idx)

    training_args = TrainingArguments(
        output_dir=tempfile.mkdtemp(), report_to=[], use_cpu=True, num_train_epochs=args.epochs,
        per_device_train_batch_size=16, per_device_eval_batch_size=100, learning_rate=3e-3,
        logging_steps=10, eval_strategy="epoch", save_strategy="no", remove_unused_columns=False,
        seed=args.seed, disable_tqdm=True, label_names=["labels"])
    trainer = Trainer(model=MLP(), args=training_args, train_dataset=train_set, eval_dataset=val_set,
                      compute_metrics=compute_metrics)
    trainer.train()


if __name__ == "__main__":
    main()
