"""Word-level transformer language model with tied input and output embeddings.

The output projection reuses the token embedding matrix (`self.lm_head.weight = self.embed.weight`,
as in GPT-2 and in Press & Wolf, 2017), so the model has one vocabulary matrix, not two.
Training samples random windows from a synthetic text, batch-first, next-token targets.
"""
import argparse
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu").split()


def synthetic_words(seed, n_words=6000):
    rng = random.Random(seed)
    out, prev = [], rng.choice(WORDS)
    for _ in range(n_words):
        # mostly the next word of the list, sometimes a random jump
        i = WORDS.index(prev)
        prev = WORDS[(i + 1) % len(WORDS)] if rng.random() < 0.7 else rng.choice(WORDS)
        out.append(prev)
    return out


class TinyLM(nn.Module):
    def __init__(self, vocab_size, d_model=64, n_heads=4, n_layers=2, block=32, dropout=0.1):
        super().__init__()
        self.block = block
        self.embed = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(block, d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 4 * d_model, dropout,
                                           batch_first=True, norm_first=True, activation="gelu")
        self.blocks = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.lm_head.weight = self.embed.weight  # weight tying
        nn.init.normal_(self.embed.weight, std=0.02)
        nn.init.normal_(self.pos.weight, std=0.02)
        self.register_buffer("causal", nn.Transformer.generate_square_subsequent_mask(block), persistent=False)

    def forward(self, idx):
        t = idx.size(1)
        h = self.embed(idx) + self.pos(torch.arange(t, device=idx.device))
        h = self.blocks(h, mask=self.causal[:t, :t], is_causal=True)
        return self.lm_head(self.norm(h))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps-per-epoch", type=int, default=20)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--batch-size", type=int, default=16)
    args = p.parse_args()

    random.seed(args.seed)
    torch.manual_seed(args.seed)
    words = synthetic_words(args.seed)
    vocab = sorted(set(words))
    stoi = {w: i for i, w in enumerate(vocab)}
    data = torch.tensor([stoi[w] for w in words], dtype=torch.long)
    split = int(0.9 * len(data))
    train_data, val_data = data[:split], data[split:]

    model = TinyLM(len(vocab))
    assert model.lm_head.weight is model.embed.weight
    n_params = sum(p.numel() for p in model.parameters())  # parameters() yields the shared matrix once
    print(f"vocab {len(vocab)}, {n_params} parameters, {len(train_data)} training tokens")
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)

    def batch(source):
        starts = torch.randint(len(source) - model.block - 1, (args.batch_size,))
        x = torch.stack([source[s:s + model.block] for s in starts])
        y = torch.stack([source[s + 1:s + 1 + model.block] for s in starts])
        return x, y

    @torch.no_grad()
    def val_loss(n_batches=4):
        model.eval()
        losses = []
        for _ in range(n_batches):
            x, y = batch(val_data)
            losses.append(F.cross_entropy(model(x).flatten(0, 1), y.flatten()).item())
        model.train()
        return sum(losses) / len(losses)

    step = 0
    for epoch in range(args.epochs):
        for _ in range(args.steps_per_epoch):
            x, y = batch(train_data)
            logits = model(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            step += 1
            if step % 5 == 0:
                print(f"step {step} loss {loss.item():.4f}")
        vl = val_loss()
        print(f"epoch {epoch} val loss {vl:.4f} (ppl {math.exp(vl):.2f})")


if __name__ == "__main__":
    main()
