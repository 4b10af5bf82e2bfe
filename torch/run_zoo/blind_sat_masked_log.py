"""Listwise learning to rank (ListNet) on synthetic search results: each query has up to 12
candidate documents with 10 features, padded to 12 and masked. A small scorer is trained with
SGD and momentum written by hand; an update whose gradient norm is not finite is skipped."""

import argparse

import torch
from torch import nn

SLOTS, FEATURES = 12, 10


def make_queries(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, SLOTS, FEATURES, generator=g)
    w = torch.randn(FEATURES, generator=g)
    relevance = torch.tanh(x @ w / 2) + 0.3 * (x[..., 0] * x[..., 1]).clamp(min=0)
    lengths = torch.where(torch.rand(n, generator=g) < 0.8, SLOTS, torch.randint(3, SLOTS, (n,), generator=g))
    mask = torch.arange(SLOTS) < lengths.unsqueeze(1)
    return x * mask.unsqueeze(-1), relevance, mask


def listnet_loss(scores, relevance, mask):
    """Cross-entropy between the top-one distributions of the relevance and of the scores."""
    target = torch.softmax(relevance.masked_fill(~mask, float("-inf")), dim=1)
    p = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=1)
    log_p = torch.where(mask, torch.log(p), 0.0)
    return -(target * log_p).sum(dim=1).mean()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x, relevance, mask = make_queries(480, args.seed)
    scorer = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 1))
    params = list(scorer.parameters())
    velocity = [torch.zeros_like(p) for p in params]

    step, skipped = 0, 0
    for epoch in range(args.epochs):
        order = torch.randperm(len(x))
        for start in range(0, len(x), args.batch_size):
            idx = order[start:start + args.batch_size]
            scores = scorer(x[idx]).squeeze(-1)
            loss = listnet_loss(scores, relevance[idx], mask[idx])
            for p in params:
                p.grad = None
            loss.backward()
            step += 1

            grad_norm = torch.sqrt(sum((p.grad ** 2).sum() for p in params))
            if torch.isfinite(grad_norm):
                with torch.no_grad():
                    for p, v in zip(params, velocity):
                        v.mul_(args.momentum).add_(p.grad)
                        p -= args.lr * v
            else:
                skipped += 1
            if step % 10 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} grad_norm {grad_norm.item():.3f}")
        print(f"epoch {epoch} skipped {skipped} of {step} updates")


if __name__ == "__main__":
    main()
