"""Train a tiny GPT-2 (transformers, built from a config) on synthetic sequences of pairs: a
random key token followed by its fixed value token."""

import argparse

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import GPT2Config, GPT2LMHeadModel

KEYS = 8
SEQ_LEN = 32


class PairSequences(Dataset):
    """Each row: key, value, key, value, ... with value = KEYS + table[key]."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        table = torch.randperm(KEYS, generator=torch.Generator().manual_seed(1234))
        keys = torch.randint(0, KEYS, (n, SEQ_LEN // 2), generator=g)
        self.rows = torch.stack([keys, KEYS + table[keys]], dim=2).reshape(n, SEQ_LEN)

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


def collate(batch):
    ids = torch.stack(batch)
    return {"input_ids": ids[:, :-1], "labels": ids[:, 1:]}


@torch.no_grad()
def value_accuracy(model, rows):
    """How often the model predicts the value token after each key."""
    model.eval()
    logits = model(input_ids=rows).logits
    predicted = logits[:, 0::2].argmax(dim=-1)
    model.train()
    return (predicted == rows[:, 1::2]).float().mean().item()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    train_set = PairSequences(160, args.seed)
    val_rows = PairSequences(64, args.seed + 1).rows
    loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, collate_fn=collate)

    config = GPT2Config(vocab_size=2 * KEYS, n_positions=SEQ_LEN, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for batch in loader:
            out = model(**batch)
            optimizer.zero_grad()
            out.loss.backward()
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {out.loss.item():.4f}")
        print(f"epoch {epoch} value accuracy {value_accuracy(model, val_rows):.3f}")


if __name__ == "__main__":
    main()
