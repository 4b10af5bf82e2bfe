"""Instruction tuning of a tiny GPT-2 (from a config) with the transformers Trainer: a word-level
tokenizer built in memory (tokenizers library), each example a request of varying length
followed by its response, tokenized with truncation to MAX_LEN tokens; the request's labels are
-100 so that only the response is learnt, and a collate function pads the batch (labels with
-100, padding masked by the attention mask)."""

import argparse
import random
import tempfile

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import (GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast, Trainer,
                          TrainingArguments)

WORDS = ("user: assistant: list count name the red blue green small big cat dog bird fish tree "
         "one two three four five six and or please").split()
MAX_LEN = 12


def make_tokenizer():
    vocab = {w: i for i, w in enumerate(["<|endoftext|>", "<pad>"] + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<|endoftext|>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>",
                                   pad_token="<pad>")


def make_pairs(n, seed):
    rng = random.Random(seed)
    things = WORDS[10:16]
    pairs = []
    for _ in range(n):
        asked = [rng.choice(things) for _ in range(rng.randint(2, 14))]
        request = "user: please count " + " ".join(asked) + " assistant:"
        response = " ".join(["one", "two", "three", "four", "five", "six"][: min(6, len(set(asked)))])
        pairs.append((request, response + " <|endoftext|>"))
    return pairs


class Pairs(torch.utils.data.Dataset):
    def __init__(self, tokenizer, pairs):
        self.rows = []
        for request, response in pairs:
            n_request = len(tokenizer(request)["input_ids"])
            ids = tokenizer(request + " " + response, truncation=True,
                            max_length=MAX_LEN)["input_ids"]
            labels = [-100] * min(n_request, len(ids)) + ids[n_request:]
            self.rows.append({"input_ids": ids, "labels": labels})

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


def make_collate(pad_id):
    def collate(rows):
        width = max(len(r["input_ids"]) for r in rows)
        out = {"input_ids": torch.full((len(rows), width), pad_id),
               "attention_mask": torch.zeros((len(rows), width), dtype=torch.long),
               "labels": torch.full((len(rows), width), -100)}
        for i, r in enumerate(rows):
            n = len(r["input_ids"])
            out["input_ids"][i, :n] = torch.tensor(r["input_ids"])
            out["attention_mask"][i, :n] = 1
            out["labels"][i, :n] = torch.tensor(r["labels"])
        return out

    return collate


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=12)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    tokenizer = make_tokenizer()
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=64, n_embd=48, n_layer=2,
                        n_head=4, bos_token_id=tokenizer.eos_token_id,
                        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    model = GPT2LMHeadModel(config)
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
            remove_unused_columns=False,
        )
        trainer = Trainer(model=model, args=training_args,
                          data_collator=make_collate(tokenizer.pad_token_id),
                          train_dataset=Pairs(tokenizer, make_pairs(360, args.seed)))
        trainer.train()


if __name__ == "__main__":
    main()
