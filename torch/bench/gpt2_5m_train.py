"""Fine-tune the ~5M-parameter GPT-2 of torch/bench/gpt2-5m (random weights, built from its
config) on synthetic token rows, the way a training script is usually written: argparse, a
Dataset, a DataLoader with a collate function, AdamW, a loop that logs. It is what
`time_to_verdict.sh` watches with `mldebug run` to time the first verdict.

    python torch/bench/gpt2_5m_train.py [--steps 30] [--shift-in-collate] [--seed 0]

`--shift-in-collate` plants a real bug: the collate function shifts the labels by one, and
GPT2LMHeadModel shifts them again, so every position learns the token two ahead.
"""

import argparse
import os

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoConfig, GPT2LMHeadModel

HERE = os.path.dirname(os.path.abspath(__file__))
SEQ_LEN = 128


class Rows(Dataset):
    """Token rows with structure to learn: each row counts up from a random start."""

    def __init__(self, n, vocab, seed):
        g = torch.Generator().manual_seed(seed)
        starts = torch.randint(3, vocab, (n, 1), generator=g)
        self.rows = (starts + torch.arange(SEQ_LEN)) % (vocab - 3) + 3

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


def collate(shift):
    def make(rows):
        ids = torch.stack(rows)
        labels = ids.clone()
        if shift:
            labels = torch.cat([labels[:, 1:], torch.full_like(labels[:, :1], -100)], dim=1)
        return {"input_ids": ids, "labels": labels}

    return make


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shift-in-collate", action="store_true")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    model = GPT2LMHeadModel(AutoConfig.from_pretrained(os.path.join(HERE, "gpt2-5m")))
    data = Rows(64 * args.batch_size, model.config.vocab_size, args.seed)
    loader = DataLoader(data, batch_size=args.batch_size, shuffle=True,
                        collate_fn=collate(args.shift_in_collate))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model.train()
    step = 0
    while step < args.steps:
        for batch in loader:
            loss = model(**batch).loss
            loss.backward()
            opt.step()
            opt.zero_grad()
            step += 1
            if step % 10 == 0:
                print(f"step {step} loss {loss.item():.3f}", flush=True)
            if step >= args.steps:
                break


if __name__ == "__main__":
    main()
