"""Fine-tune a sequence classifier from a masked-LM checkpoint (transformers): a tiny BERT is
saved with save_pretrained, then AutoModelForSequenceClassification.from_pretrained loads its
body, initialises a new pooler and classification head (the checkpoint has neither), and the
whole model is trained on a synthetic three-class task with AdamW, then evaluated."""

import argparse
import tempfile

import torch
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForSequenceClassification, BertConfig, BertForMaskedLM

VOCAB, LENGTH = 40, 16


def make_task(n, seed):
    """The class is which of three marker tokens occurs most often in the sequence."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(4, VOCAB, (n, LENGTH), generator=g)
    labels = torch.randint(0, 3, (n,), generator=g)
    for i in range(n):
        spots = torch.randperm(LENGTH - 1, generator=g)[:4] + 1
        ids[i, spots] = 1 + labels[i]
    ids[:, 0] = 0  # a leading [CLS]-like token
    return ids, labels


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    config = BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=LENGTH, pad_token_id=0)
    ids, labels = make_task(448, args.seed)
    train = DataLoader(TensorDataset(ids[:384], labels[:384]), batch_size=args.batch_size, shuffle=True)
    val = DataLoader(TensorDataset(ids[384:], labels[384:]), batch_size=64)

    with tempfile.TemporaryDirectory() as checkpoint:
        BertForMaskedLM(config).save_pretrained(checkpoint)
        model = AutoModelForSequenceClassification.from_pretrained(checkpoint, num_labels=3)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    step = 0
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in train:
            optimizer.zero_grad()
            out = model(input_ids=xb, attention_mask=torch.ones_like(xb), labels=yb)
            out.loss.backward()
            optimizer.step()
            step += 1
            if step % 8 == 0:
                print(f"epoch {epoch} step {step} loss {out.loss.item():.4f}")
        model.eval()
        correct = 0
        with torch.no_grad():
            for xb, yb in val:
                correct += (model(input_ids=xb).logits.argmax(-1) == yb).sum().item()
        print(f"epoch {epoch} val_acc {correct / 64:.3f}")


if __name__ == "__main__":
    main()
