"""Chat-format fine-tuning of a tiny GPT-2 built from a config, with a word-level tokenizer made
in memory (transformers PreTrainedTokenizerFast over a tokenizers WordLevel model). The chat
format needs role markers, so `<|user|>`, `<|assistant|>` and `<|end|>` are added to the
tokenizer as special tokens; each dialogue is "<|user|> question <|assistant|> answer <|end|>",
padded to a fixed length, labels = input_ids with the padding ignored (-100)."""

import argparse
import math

import torch
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, GPT2Config, PreTrainedTokenizerFast

WORDS = ["what", "is", "the", "colour", "of", "sky", "grass", "snow", "sea", "sun", "night",
         "blue", "green", "white", "yellow", "black", "it", "a", "name", "please", "tell", "me"]
ANSWERS = {"sky": "blue", "grass": "green", "snow": "white", "sea": "blue", "sun": "yellow",
           "night": "black"}
SPECIAL = ["<|user|>", "<|assistant|>", "<|end|>"]
LENGTH = 16


def build_tokenizer():
    vocab = {"[PAD]": 0, "[UNK]": 1}
    for w in WORDS:
        vocab[w] = len(vocab)
    core = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="[PAD]", unk_token="[UNK]")


def dialogues(n, seed, openings):
    g = torch.Generator().manual_seed(seed)
    things = list(ANSWERS)
    out = []
    for _ in range(n):
        thing = things[torch.randint(len(things), (1,), generator=g).item()]
        opening = openings[torch.randint(len(openings), (1,), generator=g).item()]
        out.append(f"<|user|> {opening} {thing} <|assistant|> it is {ANSWERS[thing]} <|end|>")
    return out


def make_collate(tokenizer):
    def collate(texts):
        enc = tokenizer(texts, padding="max_length", max_length=LENGTH, truncation=True,
                        return_tensors="pt")
        labels = enc["input_ids"].masked_fill(enc["attention_mask"] == 0, -100)
        return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"],
                "labels": labels}

    return collate


@torch.no_grad()
def evaluate(model, loader):
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
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    tokenizer = build_tokenizer()
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=LENGTH, n_embd=48, n_layer=2,
                        n_head=4, pad_token_id=tokenizer.pad_token_id)
    model = AutoModelForCausalLM.from_config(config)
    tokenizer.add_special_tokens({"additional_special_tokens": SPECIAL})
    print(f"vocabulary {len(tokenizer)} tokens, embedding {model.get_input_embeddings().num_embeddings} rows")

    collate = make_collate(tokenizer)
    # Validation asks in wordings training never uses.
    train_texts = dialogues(320, args.seed, ["what is the colour of the", "tell me the colour of the"])
    val_texts = dialogues(64, args.seed + 1, ["name the colour of the", "please tell me the colour of the"])
    train_loader = DataLoader(train_texts, batch_size=args.batch_size, shuffle=True, collate_fn=collate)
    val_loader = DataLoader(val_texts, batch_size=args.batch_size, collate_fn=collate)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        for batch in train_loader:
            loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        print(f"epoch {epoch} val perplexity {evaluate(model, val_loader):.2f}")


if __name__ == "__main__":
    main()
