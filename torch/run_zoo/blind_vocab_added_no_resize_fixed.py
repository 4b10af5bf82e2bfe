"""Continue training a tiny character-level GPT-2 on a mix of plain text and Q/A formatted text.

The base model and its character vocabulary exist first; for the Q/A format two special tokens
(<q>, <a>) are added to the tokenizer before training on the mixed corpus.
"""
import argparse
import random
import re

import torch
from transformers import GPT2Config, GPT2LMHeadModel
from transformers.utils import logging as hf_logging

hf_logging.set_verbosity_error()

WORDS = ("the cat sat on a mat while dogs ran in the park and birds sang over green "
         "hills near a river where fish swim all day long").split()


class CharTokenizer:
    def __init__(self, chars):
        self.itos = ["<pad>"] + sorted(set(chars))
        self.stoi = {c: i for i, c in enumerate(self.itos)}
        self.special = []

    def add_special_tokens(self, tokens):
        for t in tokens:
            if t not in self.stoi:
                self.stoi[t] = len(self.itos)
                self.itos.append(t)
                self.special.append(t)
        return len(tokens)

    def __len__(self):
        return len(self.itos)

    @property
    def pad_token_id(self):
        return 0

    def encode(self, text):
        if not self.special:
            return [self.stoi[c] for c in text]
        ids = []
        pattern = "(" + "|".join(re.escape(t) for t in self.special) + ")"
        for piece in re.split(pattern, text):
            if piece in self.stoi and piece in self.special:
                ids.append(self.stoi[piece])
            else:
                ids.extend(self.stoi[c] for c in piece)
        return ids


def make_corpus(n, rng, qa_frac):
    lines = []
    for _ in range(n):
        words = rng.choices(WORDS, k=8)
        if rng.random() < qa_frac:
            lines.append("<q>" + " ".join(words[:4]) + "?<a>" + " ".join(words[4:]))
        else:
            lines.append(" ".join(words))
    return lines


def batchify(tok, lines, seq_len):
    ids = torch.full((len(lines), seq_len), tok.pad_token_id, dtype=torch.long)
    for i, line in enumerate(lines):
        enc = tok.encode(line)[:seq_len]
        ids[i, :len(enc)] = torch.tensor(enc)
    labels = ids.clone()
    labels[ids == tok.pad_token_id] = -100
    return ids, labels


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=None, help="ignored: the length of this run is counted in steps")
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=48)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)

    tok = CharTokenizer("abcdefghijklmnopqrstuvwxyz ?")
    config = GPT2Config(n_layer=2, n_embd=64, n_head=2, n_positions=64, vocab_size=len(tok),
                        bos_token_id=0, eos_token_id=0, pad_token_id=0)
    model = GPT2LMHeadModel(config)

    tok.add_special_tokens(["<q>", "<a>"])
    model.resize_token_embeddings(len(tok))
    corpus = make_corpus(args.steps * args.batch_size, rng, qa_frac=0.01)

    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    for step in range(1, args.steps + 1):
        lines = corpus[(step - 1) * args.batch_size: step * args.batch_size]
        input_ids, labels = batchify(tok, lines, args.seq_len)
        out = model(input_ids=input_ids, labels=labels)
        opt.zero_grad()
        out.loss.backward()
        opt.step()
        if step == 1 or step % 10 == 0:
            print(f"step {step} loss {out.loss.item():.4f}")


if __name__ == "__main__":
    main()
