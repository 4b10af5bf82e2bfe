"""Causal-LM fine-tuning of a tiny GPT-2 (from a config) with the transformers Trainer and its
causal-LM collator, DataCollatorForLanguageModeling(mlm=False), on short "instructions" that
end with the end-of-text token. The word-level tokenizer is built in memory with the tokenizers
library; as is usual for GPT-2, its padding token is set to the end-of-text token."""

import argparse
import random
import tempfile

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import (DataCollatorForLanguageModeling, GPT2Config, GPT2LMHeadModel,
                          PreTrainedTokenizerFast, Trainer, TrainingArguments)

WORDS = ("open close the a door window box lid slowly quickly now then red blue green small big "
         "turn left right go stop wait and please").split()
SPECIALS = ["<|endoftext|>", "<pad>"]


def make_tokenizer():
    vocab = {w: i for i, w in enumerate(SPECIALS + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<|endoftext|>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>")
    tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def make_texts(n, seed):
    rng = random.Random(seed)
    verbs, objects = WORDS[:2], WORDS[4:7]
    texts = []
    for _ in range(n):
        words = [rng.choice(["please", "now"]), rng.choice(verbs), rng.choice(["the", "a"]),
                 rng.choice(WORDS[11:16]), rng.choice(objects)]
        if rng.random() < 0.6:
            words += [rng.choice(["slowly", "quickly"]), "and", rng.choice(["wait", "stop"])]
        texts.append(" ".join(words) + " <|endoftext|>")
    return texts


class Texts(torch.utils.data.Dataset):
    def __init__(self, tokenizer, texts):
        self.rows = [tokenizer(t)["input_ids"] for t in texts]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return {"input_ids": self.rows[i]}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    tokenizer = make_tokenizer()
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=32, n_embd=48, n_layer=2,
                        n_head=4, bos_token_id=tokenizer.eos_token_id,
                        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    model = GPT2LMHeadModel(config)
    collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)
    with tempfile.TemporaryDirectory() as output_dir:
        training_args = TrainingArguments(
            output_dir=output_dir,
            num_train_epochs=args.epochs,
            per_device_train_batch_size=args.batch_size,
            learning_rate=args.lr,
            warmup_steps=3,
            logging_steps=10,
            save_strategy="no",
            report_to="none",
            use_cpu=True,
            seed=args.seed,
            dataloader_num_workers=0,
            disable_tqdm=True,
        )
        trainer = Trainer(model=model, args=training_args, data_collator=collator,
                          train_dataset=Texts(tokenizer, make_texts(320, args.seed)))
        trainer.train()


if __name__ == "__main__":
    main()
