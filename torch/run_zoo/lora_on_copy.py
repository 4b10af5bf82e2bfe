"""LoRA fine-tuning (peft) of a tiny Llama built from a config (transformers): adapters on the
attention projections, the base weights frozen, on synthetic key/value token sequences; the
LoRA wrap is made of a copy of the base model."""

import argparse
import copy

import torch
from peft import LoraConfig, get_peft_model
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, LlamaConfig

KEYS, SEQ_LEN = 8, 32


def make_rows(n, seed):
    """key, value, key, value, ... with value = KEYS + table[key]."""
    g = torch.Generator().manual_seed(seed)
    table = torch.randperm(KEYS, generator=torch.Generator().manual_seed(1234))
    keys = torch.randint(0, KEYS, (n, SEQ_LEN // 2), generator=g)
    return list(torch.stack([keys, KEYS + table[keys]], dim=2).reshape(n, SEQ_LEN))


def collate(rows):
    input_ids = torch.stack(rows)
    return {"input_ids": input_ids, "labels": input_ids.clone()}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lora-r", type=int, default=8)
    parser.add_argument("--lora-alpha", type=int, default=16)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    loader = DataLoader(make_rows(160, args.seed), batch_size=args.batch_size, shuffle=True, collate_fn=collate)
    val_batch = collate(make_rows(32, args.seed + 1))

    config = LlamaConfig(vocab_size=2 * KEYS, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=SEQ_LEN,
                         bos_token_id=0, eos_token_id=0)
    model = AutoModelForCausalLM.from_config(config)
    lora = LoraConfig(r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=0.05,
                      target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM")
    peft_model = get_peft_model(copy.deepcopy(model), lora)
    peft_model.print_trainable_parameters()

    optimizer = torch.optim.AdamW((p for p in model.parameters() if p.requires_grad), lr=args.lr)

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
            print(f"epoch {epoch} val_loss {model(**val_batch).loss.item():.4f}")


if __name__ == "__main__":
    main()
