"""LoRA fine-tuning of a small GPT-2 (built from a tiny config and saved as the "base" checkpoint)
on a character-level task, with the HuggingFace Trainer. LoRA adapters on the attention projection
(c_attn), rank 4."""
import argparse
import random
import tempfile

import torch
from peft import LoraConfig, get_peft_model
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments
from transformers.utils import logging as hf_logging

hf_logging.set_verbosity_error()

CHARS = "abcdefghijklmnopqrstuvwxyz ."
STOI = {c: i + 1 for i, c in enumerate(CHARS)}  # 0 = pad


class CharDataset(torch.utils.data.Dataset):
    def __init__(self, n, seq_len, seed, words=("alpha", "beta", "gamma", "delta", "omega", "sigma")):
        rng = random.Random(seed)
        self.items = []
        for _ in range(n):
            text = " ".join(rng.choice(words) for _ in range(14)) + "."
            ids = torch.tensor([STOI[c] for c in text[:seq_len]])
            self.items.append({"input_ids": ids, "labels": ids.clone()})

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def save_base(path, seed):
    torch.manual_seed(seed)
    config = GPT2Config(n_layer=2, n_embd=64, n_head=2, n_positions=64, vocab_size=len(CHARS) + 1,
                        bos_token_id=0, eos_token_id=0, pad_token_id=0)
    model = GPT2LMHeadModel(config)
    data = CharDataset(960, 48, seed + 1, words=("the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog"))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for i in range(0, len(data), 16):
        ids = torch.stack([data[j]["input_ids"] for j in range(i, i + 16)])
        loss = model(input_ids=ids, labels=ids).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"base model pretrained, loss {loss.item():.4f}")
    model.save_pretrained(path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=None, help="ignored: the length of this run is counted in steps")
    parser.add_argument("--steps", type=int, default=80)
    args = parser.parse_args()
    torch.set_num_threads(1)

    base_dir = tempfile.mkdtemp()
    save_base(base_dir, args.seed)

    model = GPT2LMHeadModel.from_pretrained(base_dir)
    lora_config = LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules=["c_attn"],
                             fan_in_fan_out=True, task_type="CAUSAL_LM")
    lora_model = get_peft_model(GPT2LMHeadModel.from_pretrained(base_dir), lora_config)
    lora_model.print_trainable_parameters()

    training_args = TrainingArguments(
        output_dir=tempfile.mkdtemp(), report_to=[], use_cpu=True, max_steps=args.steps,
        per_device_train_batch_size=16, learning_rate=1e-2, logging_steps=10, save_strategy="no",
        remove_unused_columns=False, seed=args.seed, disable_tqdm=True, label_names=["labels"])
    trainer = Trainer(model=lora_model, args=training_args,
                      train_dataset=CharDataset(640, 48, args.seed))
    trainer.train()


if __name__ == "__main__":
    main()
