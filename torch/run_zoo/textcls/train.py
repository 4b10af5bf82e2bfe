"""Train the topic classifier: python -m textcls.train [--seed N] [--epochs N]."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader

from .data import TOPICS, VOCAB, TopicDocuments
from .model import BagClassifier


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--log-every", type=int, default=5)
    return parser.parse_args()


def train_one_epoch(model, loader, optimizer, criterion, epoch, step, log_every):
    model.train()
    for words, topics in loader:
        optimizer.zero_grad()
        loss = criterion(model(words), topics)
        loss.backward()
        optimizer.step()
        step += 1
        if step % log_every == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
    return step


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = sum((model(words).argmax(1) == topics).sum().item() for words, topics in loader)
    return correct / len(loader.dataset)


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    train_loader = DataLoader(TopicDocuments(320, args.seed), batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(TopicDocuments(128, args.seed + 1), batch_size=64)

    model = BagClassifier(VOCAB, TOPICS)
    optimizer = torch.optim.Adagrad(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        step = train_one_epoch(model, train_loader, optimizer, criterion, epoch, step, args.log_every)
        print(f"epoch {epoch} val_acc {evaluate(model, val_loader):.3f}")


if __name__ == "__main__":
    main()
