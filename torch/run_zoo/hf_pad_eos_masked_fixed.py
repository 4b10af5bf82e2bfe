"""Train a tiny GPT-2 (transformers, from a config) on synthetic sentences that end with the
end-of-text token, right-padded to the longest in the batch with that same token as the padding
token (GPT-2 has no pad token: pad = eos); `collate` builds the labels from the input ids and
takes the padding out of the loss."""

import argparse
import random

import torch
from torch.utils.data import DataLoader
from transformers import GPT2Config, GPT2LMHeadModel

EOS = 0
VOCAB = 24


def make_sentences(n, seed):
    """Counting sentences: start anywhere, step by 1 or 2 (mod the word list), 4 to 24 words."""
    rng = random.Random(seed)
    sentences = []
    for _ in range(n):
        word, stride = rng.randrange(1, VOCAB), rng.choice((1, 2))
        words = []
        for _ in range(rng.randint(4, 24)):
            words.append(word)
            word = 1 + (word - 1 + stride) % (VOCAB - 1)
        sentences.append(words + [EOS])
    return sentences


def collate(sentences):
    width = max(len(s) for s in sentences)
    input_ids = torch.full((len(sentences), width), EOS)
    attention_mask = torch.zeros((len(sentences), width), dtype=torch.long)
    for i, s in enumerate(sentences):
        input_ids[i, : len(s)] = torch.tensor(s)
        attention_mask[i, : len(s)] = 1
    labels = input_ids.clone()
    labels[attention_mask == 0] = -100
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
    loader = DataLoader(make_sentences(160, args.seed), batch_size=args.batch_size, shuffle=True,
                        collate_fn=collate)
    val_batch = collate(make_sentences(64, args.seed + 1))

    config = GPT2Config(vocab_size=VOCAB, n_positions=32, n_embd=32, n_layer=2, n_head=2,
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
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        model.eval()
        with torch.no_grad():
            val_loss = model(**val_batch).loss.item()
        print(f"epoch {epoch} val_loss {val_loss:.4f}")


if __name__ == "__main__":
    main()
