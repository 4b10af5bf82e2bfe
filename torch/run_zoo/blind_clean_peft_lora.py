"""LoRA fine-tuning of a tiny GPT-2 with peft, plain loop: a base model is first trained briefly on
one word set, then LoRA adapters (rank 8 on c_attn) are added with get_peft_model and ONLY the
adapter parameters are trained on a new word set; the base weights are checked to stay unchanged."""
import argparse
import random

import torch
from peft import LoraConfig, get_peft_model
from transformers import GPT2Config, GPT2LMHeadModel
from transformers.utils import logging as hf_logging

hf_logging.set_verbosity_error()
CHARS = "abcdefghijklmnopqrstuvwxyz ."
STOI = {c: i + 1 for i, c in enumerate(CHARS)}


def batches(words, n_batches, bs, seq_len, seed):
    rng = random.Random(seed)
    for _ in range(n_batches):
        rows = []
        for _ in range(bs):
            text = " ".join(rng.choice(words) for _ in range(16))
            rows.append([STOI[c] for c in text[:seq_len]])
        ids = torch.tensor(rows)
        yield ids


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=None, help="ignored: the length of this run is counted in steps")
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)

    config = GPT2Config(n_layer=2, n_embd=64, n_head=2, n_positions=64, vocab_size=len(CHARS) + 1,
                        bos_token_id=0, eos_token_id=0, pad_token_id=0)
    base = GPT2LMHeadModel(config)
    opt = torch.optim.AdamW(base.parameters(), lr=3e-3)
    for ids in batches(["the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog"], 60, 16, 48, args.seed):
        loss = base(input_ids=ids, labels=ids).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"base pretrained, loss {loss.item():.4f}")

    lora_config = LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules=["c_attn"],
                             fan_in_fan_out=True, task_type="CAUSAL_LM")
    model = get_peft_model(base, lora_config)
    model.print_trainable_parameters()
    frozen_before = {n: p.detach().clone() for n, p in model.named_parameters() if not p.requires_grad}
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=1e-2)

    model.train()
    for step, ids in enumerate(batches(["alpha", "beta", "gamma", "delta", "omega", "sigma"], args.steps, 16, 48,
                                       args.seed + 1), start=1):
        loss = model(input_ids=ids, labels=ids).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step == 1 or step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")
    changed = [n for n, p in model.named_parameters() if n in frozen_before and not torch.equal(p, frozen_before[n])]
    assert not changed, changed
    print("base weights unchanged; adapters trained")


if __name__ == "__main__":
    main()
