"""Causal-LM training of a tiny GPT-2 built from a config (transformers AutoModelForCausalLM),
the run_clm way: a synthetic token stream cut into fixed-length blocks, labels = input_ids
(the model shifts them), AdamW with linear warmup and decay, gradient clipping, and perplexity
on held-out blocks."""

import argparse
import math

import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, GPT2Config, get_linear_schedule_with_warmup

VOCAB, BLOCK = 32, 32


def token_stream(length, seed):
    """A stream from a sparse Markov chain: each token has three likely successors."""
    g = torch.Generator().manual_seed(seed)
    successors = torch.randint(0, VOCAB, (VOCAB, 3), generator=torch.Generator().manual_seed(7))
    tokens = [0]
    picks = torch.randint(0, 3, (length,), generator=g).tolist()
    for pick in picks[1:]:
        tokens.append(successors[tokens[-1], pick].item())
    return torch.tensor(tokens)


def group_blocks(stream):
    usable = len(stream) // BLOCK * BLOCK
    return list(stream[:usable].view(-1, BLOCK))


def collate(blocks):
    input_ids = torch.stack(blocks)
    return {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids), "labels": input_ids.clone()}


@torch.no_grad()
def perplexity(model, loader):
    model.eval()
    losses = [model(**batch).loss.item() for batch in loader]
    model.train()
    return math.exp(sum(losses) / len(losses))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--warmup-steps", type=int, default=5)
    parser.add_argument("--max-grad-norm", type=float, default=1.0)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    train_blocks = group_blocks(token_stream(80 * BLOCK, args.seed))
    val_blocks = group_blocks(token_stream(16 * BLOCK, args.seed + 1))
    train_loader = DataLoader(train_blocks, batch_size=args.batch_size, shuffle=True, collate_fn=collate)
    val_loader = DataLoader(val_blocks, batch_size=args.batch_size, collate_fn=collate)

    config = GPT2Config(vocab_size=VOCAB, n_positions=BLOCK, n_embd=48, n_layer=2, n_head=4,
                        bos_token_id=0, eos_token_id=0)
    model = AutoModelForCausalLM.from_config(config)
    no_decay = ("bias", "ln_")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=args.lr)
    total_steps = args.epochs * len(train_loader)
    scheduler = get_linear_schedule_with_warmup(optimizer, args.warmup_steps, total_steps)

    step = 0
    print(f"initial perplexity {perplexity(model, val_loader):.2f} (vocabulary {VOCAB})")
    for epoch in range(args.epochs):
        model.train()
        for batch in train_loader:
            loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.2e}")
        print(f"epoch {epoch} val perplexity {perplexity(model, val_loader):.2f}")


if __name__ == "__main__":
    main()
