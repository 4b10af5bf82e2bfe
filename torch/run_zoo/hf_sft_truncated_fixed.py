"""Supervised fine-tuning of a tiny GPT-2 (transformers, from a config) with a hand-written loop:
each example is a question (a string of digits of any length between "Q" and "A") and its
answer (the question's first three digits, reversed), only the answer is supervised (the
question's labels are -100), and every example is truncated to MAX_LEN tokens, then
right-padded with the end-of-text token, whose padding positions are masked by the attention
mask."""

import argparse
import random

import torch
from torch.utils.data import DataLoader
from transformers import GPT2Config, GPT2LMHeadModel

EOS, Q, A = 0, 1, 2  # digits are 3..12
VOCAB = 13
MAX_LEN = 48


def make_examples(n, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        question = [3 + rng.randrange(10) for _ in range(rng.randint(4, 30))]
        answer = question[:3][::-1]
        out.append(([Q] + question + [A], answer + [EOS]))
    return out


def encode(prompt, answer):
    ids = (prompt + answer)[:MAX_LEN]
    labels = ([-100] * len(prompt) + answer)[:MAX_LEN]
    return ids, labels


def collate(examples):
    rows = [encode(p, a) for p, a in examples]
    width = max(len(ids) for ids, _ in rows)
    input_ids = torch.full((len(rows), width), EOS)
    labels = torch.full((len(rows), width), -100)
    attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, (ids, lab) in enumerate(rows):
        input_ids[i, : len(ids)] = torch.tensor(ids)
        labels[i, : len(lab)] = torch.tensor(lab)
        attention_mask[i, : len(ids)] = 1
    return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    loader = DataLoader(make_examples(480, args.seed), batch_size=args.batch_size, shuffle=True,
                        collate_fn=collate)
    config = GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=48, n_layer=2, n_head=4,
                        bos_token_id=EOS, eos_token_id=EOS, pad_token_id=EOS)
    model = GPT2LMHeadModel(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    step = 0
    for epoch in range(args.epochs):
        model.train()
        for batch in loader:
            loss = model(**batch).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % 10 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
