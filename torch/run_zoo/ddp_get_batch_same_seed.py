"""Data-parallel training (DistributedDataParallel over gloo, CPU) of a small character-level
language model, nanoGPT style: every step draws a batch of random windows from one token
stream (`get_batch`, no DataLoader), and the main process estimates the loss on held-out text
before training and every `--eval-interval` steps.

    torchrun --standalone --nproc_per_node 2 <this script>
"""

import argparse

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

VOCAB, BLOCK = 48, 16


def make_corpus(n, seed):
    """A stream where each character mostly follows from the two before it."""
    g = torch.Generator().manual_seed(seed)
    table = torch.randint(0, VOCAB, (VOCAB, VOCAB), generator=g)
    noise = torch.randint(0, VOCAB, (n,), generator=g)
    keep = torch.rand(n, generator=g) < 0.8
    out = torch.empty(n, dtype=torch.long)
    out[:2] = noise[:2]
    for i in range(2, n):
        out[i] = table[out[i - 2], out[i - 1]] if keep[i] else noise[i]
    return out


class TinyLM(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        self.mix = nn.Linear(2 * dim, dim)
        self.head = nn.Linear(dim, VOCAB)

    def forward(self, idx):
        e = self.embed(idx)
        prev = torch.cat([torch.zeros_like(e[:, :1]), e[:, :-1]], dim=1)
        return self.head(torch.tanh(self.mix(torch.cat([prev, e], dim=-1))))


def get_batch(data, batch_size):
    ix = torch.randint(len(data) - BLOCK - 1, (batch_size,))
    x = torch.stack([data[i:i + BLOCK] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + BLOCK] for i in ix])
    return x, y


@torch.no_grad()
def estimate_loss(model, data, batch_size, iters):
    model.eval()
    losses = [F.cross_entropy(model(x).flatten(0, 1), y.flatten()).item()
              for x, y in (get_batch(data, batch_size) for _ in range(iters))]
    model.train()
    return sum(losses) / len(losses)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-iters", type=int, default=60)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--eval-interval", type=int, default=25)
    parser.add_argument("--eval-iters", type=int, default=4)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    master = rank == 0
    torch.manual_seed(args.seed)

    corpus = make_corpus(24000, args.seed)
    train_data, val_data = corpus[:21600], corpus[21600:]
    raw = TinyLM()
    model = DDP(raw)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    for it in range(args.max_iters):
        if it % args.eval_interval == 0 and master:
            print(f"iter {it} val loss {estimate_loss(raw, val_data, args.batch_size, args.eval_iters):.4f}")
        x, y = get_batch(train_data, args.batch_size)
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if master and it % 10 == 0:
            print(f"iter {it} loss {loss.item():.4f}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
