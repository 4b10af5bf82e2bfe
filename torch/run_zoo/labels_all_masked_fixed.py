"""Supervised fine-tuning of a tiny GPT-2 (transformers, from a config) on synthetic
prompt/response pairs (the response is the prompt reversed), with the loss on the response
tokens only."""

import argparse
import random

import torch
from torch.utils.data import DataLoader
from transformers import GPT2Config, GPT2LMHeadModel

PAD, SEP, EOS = 0, 1, 2
FIRST_WORD, VOCAB = 3, 16
IGNORE_INDEX = -100


def make_examples(n, seed):
    rng = random.Random(seed)
    examples = []
    for _ in range(n):
        prompt = [rng.randrange(FIRST_WORD, VOCAB) for _ in range(rng.randint(3, 8))]
        examples.append({"prompt": prompt, "response": prompt[::-1]})
    return examples


def collate(examples):
    rows, targets = [], []
    for ex in examples:
        prompt_ids = ex["prompt"] + [SEP]
        ids = prompt_ids + ex["response"] + [EOS]
        labels = list(ids)
        labels[: len(prompt_ids)] = [IGNORE_INDEX] * len(prompt_ids)
        rows.append(ids)
        targets.append(labels)
    width = max(len(r) for r in rows)
    input_ids = torch.full((len(rows), width), PAD)
    labels = torch.full((len(rows), width), IGNORE_INDEX)
    attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, (ids, lab) in enumerate(zip(rows, targets)):
        input_ids[i, : len(ids)] = torch.tensor(ids)
        labels[i, : len(lab)] = torch.tensor(lab)
        attention_mask[i, : len(ids)] = 1
    return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    loader = DataLoader(make_examples(160, args.seed), batch_size=args.batch_size, shuffle=True,
                        collate_fn=collate)
    config = GPT2Config(vocab_size=VOCAB, n_positions=32, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=EOS, eos_token_id=EOS, pad_token_id=PAD)
    model = GPT2LMHeadModel(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for batch in loader:
            loss = model(**batch).loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
