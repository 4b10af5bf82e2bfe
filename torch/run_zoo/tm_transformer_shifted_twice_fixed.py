"""A small causal Transformer language model in the sequence-first layout (`batch_first=False`,
as nn.Transformer defaults and the word_language_model example's TransformerModel uses): a token
stream laid out in columns, windows of shape (T, B), a square causal mask, AdamW and a cosine
schedule. `window` cuts the inputs and the targets from one chunk of the stream."""

import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 40


def make_stream(n, seed):
    """A stream where each token is followed by one of two successors of a fixed table."""
    g = torch.Generator().manual_seed(seed)
    table = torch.randint(0, VOCAB, (VOCAB, 2), generator=torch.Generator().manual_seed(11))
    out = torch.empty(n, dtype=torch.long)
    out[0] = 0
    choice = torch.randint(0, 2, (n,), generator=g)
    for i in range(1, n):
        out[i] = table[out[i - 1], choice[i]]
    return out


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=512):
        super().__init__()
        pe = torch.zeros(max_len, 1, d_model)
        position = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe[:, 0, 0::2] = torch.sin(position * div)
        pe[:, 0, 1::2] = torch.cos(position * div)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return x + self.pe[: x.size(0)]


class TransformerLM(nn.Module):
    def __init__(self, d_model=48, nhead=4, layers=2):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d_model)
        self.pos = PositionalEncoding(d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, 4 * d_model, dropout=0.1)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, VOCAB)

    def forward(self, src):  # src: (T, B)
        mask = nn.Transformer.generate_square_subsequent_mask(src.size(0))
        h = self.encoder(self.pos(self.embed(src) * math.sqrt(self.embed.embedding_dim)), mask=mask,
                         is_causal=True)
        return self.head(h)  # (T, B, V)


def window(columns, i, bptt):
    chunk = columns[i:i + bptt + 2]
    return chunk[:-2], chunk[1:-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=12)
    parser.add_argument("--bptt", type=int, default=24)
    parser.add_argument("--lr", type=float, default=2e-3)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    stream = make_stream(12000, args.seed)
    usable = len(stream) // args.batch_size * args.batch_size
    columns = stream[:usable].view(args.batch_size, -1).t()  # (T_total, B)
    starts = list(range(0, columns.size(0) - args.bptt - 2, args.bptt))
    model = TransformerLM()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, args.epochs * len(starts))
    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        for n, i in enumerate(starts):
            inputs, targets = window(columns, i, args.bptt)
            logits = model(inputs)
            loss = F.cross_entropy(logits.view(-1, VOCAB), targets.reshape(-1))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            total += loss.item()
            if (n + 1) % 10 == 0:
                print(f"epoch {epoch} batch {n + 1} loss {total / 10:.3f}")
                total = 0.0


if __name__ == "__main__":
    main()
