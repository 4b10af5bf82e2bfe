"""Causal-LM training of a tiny GPT-2 built from a config with the transformers Trainer (the
training loop lives in the library): synthetic fixed-length token blocks, labels = input_ids,
evaluation every epoch, nothing saved."""

import argparse
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

VOCAB, BLOCK = 32, 32


class Blocks(Dataset):
    """Blocks of a stream where each token is followed by one of three fixed successors."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        successors = torch.randint(0, VOCAB, (VOCAB, 3), generator=torch.Generator().manual_seed(7))
        rows = torch.empty(n, BLOCK, dtype=torch.long)
        rows[:, 0] = torch.randint(0, VOCAB, (n,), generator=g)
        for t in range(1, BLOCK):
            rows[:, t] = successors[rows[:, t - 1], torch.randint(0, 3, (n,), generator=g)]
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return {"input_ids": self.rows[i], "labels": self.rows[i].clone()}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    config = GPT2Config(vocab_size=VOCAB, n_positions=BLOCK, n_embd=48, n_layer=2, n_head=4,
                        bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config)

    with tempfile.TemporaryDirectory() as output_dir:
        training_args = TrainingArguments(
            output_dir=output_dir,
            num_train_epochs=args.epochs,
            per_device_train_batch_size=args.batch_size,
            per_device_eval_batch_size=args.batch_size,
            learning_rate=args.lr,
            warmup_steps=3,
            weight_decay=0.01,
            logging_steps=args.log_every,
            eval_strategy="epoch",
            save_strategy="no",
            report_to="none",
            use_cpu=True,
            seed=args.seed,
            dataloader_num_workers=0,
            disable_tqdm=True,
        )
        trainer = Trainer(model=model, args=training_args,
                          train_dataset=Blocks(80, args.seed), eval_dataset=Blocks(16, args.seed + 1))
        trainer.train()
        print(trainer.evaluate())


if __name__ == "__main__":
    main()
