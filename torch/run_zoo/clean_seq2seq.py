"""GRU encoder-decoder that learns to reverse short digit sequences.

Training uses teacher forcing (the decoder reads the gold previous token); evaluation decodes
greedily, feeding back its own predictions, with the model in eval mode under no_grad.
"""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

PAD, SOS = 0, 1
N_SYMBOLS = 8            # tokens 2 .. 9
VOCAB = N_SYMBOLS + 2
LENGTH = 6


class ReverseDataset(Dataset):
    def __init__(self, size, seed):
        g = torch.Generator().manual_seed(seed)
        self.src = torch.randint(2, VOCAB, (size, LENGTH), generator=g)
        self.tgt = self.src.flip(1)

    def __len__(self):
        return len(self.src)

    def __getitem__(self, i):
        return self.src[i], self.tgt[i]


class Encoder(nn.Module):
    def __init__(self, emb, hidden):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, emb)
        self.rnn = nn.GRU(emb, hidden, batch_first=True)

    def forward(self, src):
        _, h = self.rnn(self.emb(src))
        return h


class Decoder(nn.Module):
    def __init__(self, emb, hidden, dropout=0.1):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, emb)
        self.rnn = nn.GRU(emb, hidden, batch_first=True)
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(hidden, VOCAB)

    def forward(self, inp, h):
        o, h = self.rnn(self.drop(self.emb(inp)), h)
        return self.out(self.drop(o)), h


class Seq2Seq(nn.Module):
    def __init__(self, emb=32, hidden=96):
        super().__init__()
        self.encoder = Encoder(emb, hidden)
        self.decoder = Decoder(emb, hidden)

    def forward(self, src, tgt):
        """Teacher forcing: decoder input is <sos> followed by the target shifted right."""
        h = self.encoder(src)
        sos = torch.full((tgt.size(0), 1), SOS, dtype=torch.long)
        dec_in = torch.cat([sos, tgt[:, :-1]], dim=1)
        logits, _ = self.decoder(dec_in, h)
        return logits

    @torch.no_grad()
    def greedy(self, src, max_len=LENGTH):
        h = self.encoder(src)
        tok = torch.full((src.size(0), 1), SOS, dtype=torch.long)
        out = []
        for _ in range(max_len):
            logits, h = self.decoder(tok, h)
            tok = logits.argmax(-1)
            out.append(tok)
        return torch.cat(out, dim=1)


def evaluate(model, loader):
    model.eval()
    tok_ok = seq_ok = tok_n = seq_n = 0
    for src, tgt in loader:
        pred = model.greedy(src)
        tok_ok += (pred == tgt).sum().item()
        tok_n += tgt.numel()
        seq_ok += (pred == tgt).all(1).sum().item()
        seq_n += len(tgt)
    return tok_ok / tok_n, seq_ok / seq_n


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--clip", type=float, default=1.0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    train_loader = DataLoader(ReverseDataset(1536, args.seed), batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(ReverseDataset(256, args.seed + 7), batch_size=128)

    model = Seq2Seq()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for src, tgt in train_loader:
            logits = model(src, tgt)
            loss = F.cross_entropy(logits.reshape(-1, VOCAB), tgt.reshape(-1), ignore_index=PAD)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            step += 1
            if step % 8 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        tok_acc, seq_acc = evaluate(model, val_loader)
        print(f"epoch {epoch} greedy token acc {tok_acc:.3f} sequence acc {seq_acc:.3f}")


if __name__ == "__main__":
    main()
