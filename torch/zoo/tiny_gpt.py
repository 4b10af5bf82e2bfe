"""A tiny GPT (causal LM, labels shifted in the batch) and its buggy twins."""

import torch
from torch import nn

VOCAB, SEQ, BATCH, DIM, HEADS, LAYERS = 32, 16, 8, 32, 2, 2
PAD = 0


def sequences(seed, n=BATCH, t=SEQ):
    """Rows of an arithmetic progression mod VOCAB (start and step random per row, never PAD)."""
    g = torch.Generator().manual_seed(seed)
    start = torch.randint(1, VOCAB, (n, 1), generator=g)
    step = torch.randint(1, 4, (n, 1), generator=g)
    ids = (start + step * torch.arange(t)) % (VOCAB - 1) + 1
    return ids


def shifted(ids):
    """Next-token targets: position t predicts token t+1; the last position has none."""
    targets = torch.full_like(ids, -100)
    targets[:, :-1] = ids[:, 1:]
    return targets


class Block(nn.Module):
    def __init__(self, causal=True, mix_batch=False):
        super().__init__()
        self.ln1 = nn.LayerNorm(DIM)
        self.attn = nn.MultiheadAttention(DIM, HEADS)  # sequence-first: (T, B, C)
        self.ln2 = nn.LayerNorm(DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))
        self.causal = causal
        self.mix_batch = mix_batch

    def forward(self, x):
        b, t, c = x.shape
        h = self.ln1(x)
        h = h.view(t, b, c) if self.mix_batch else h.transpose(0, 1)
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), 1) if self.causal else None
        a, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False)
        x = x + a.transpose(0, 1)
        return x + self.mlp(self.ln2(x))


class Gpt(nn.Module):
    def __init__(self, causal=True, mix_batch=False):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Embedding(SEQ, DIM)
        self.blocks = nn.ModuleList(Block(causal, mix_batch) for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


class TinyGpt:
    """Clean: two blocks, causal mask, targets shifted by one."""

    task = "causal_lm"

    def build(self):
        return Gpt()

    def batch(self, seed, device):
        ids = sequences(seed)
        return ids.to(device), shifted(ids).to(device)


class Unshifted(TinyGpt):
    """Twin: the targets are the inputs themselves, not shifted by one: the model learns to copy."""

    def batch(self, seed, device):
        ids = sequences(seed)
        return ids.to(device), ids.clone().to(device)  # the bug


class NoCausalMask(TinyGpt):
    """Twin: attention has no causal mask, so each position sees the tokens after it."""

    def build(self):
        return Gpt(causal=False)


class ViewNotTranspose(TinyGpt):
    """Twin: (B, T, C) -> (T, B, C) with .view instead of .transpose: samples mix in attention."""

    def build(self):
        return Gpt(mix_batch=True)


class PadLabelled(TinyGpt):
    """Twin: padded rows keep the pad token as their target instead of -100: padding is trained on."""

    def batch(self, seed, device):
        ids = sequences(seed)
        g = torch.Generator().manual_seed(seed + 1)
        for r in range(0, BATCH, 2):  # every other row is shorter, right-padded
            keep = int(torch.randint(SEQ // 2, SEQ - 2, (1,), generator=g))
            ids[r, keep:] = PAD
        return ids.to(device), shifted(ids).to(device)  # the bug: no -100 on padding


class KeepsLoss(TinyGpt):
    """Twin: every step's loss and logits go into a list for logging, graph and all (not
    `.item()` / `.detach()`), so each step keeps the last one's tensors alive."""

    def __init__(self):
        self.history = []

    def loss(self, output, targets):
        loss = nn.functional.cross_entropy(
            output.reshape(-1, output.shape[-1]), targets.reshape(-1), ignore_index=-100
        )
        self.history.append((loss, output))  # the bug: use loss.item(), output.detach()
        return loss
