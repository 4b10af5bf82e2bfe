"""Route support tickets to queues: an MLP over ticket features (a hashed bag of words, 64
values), one output per queue of the help desk. The queue ids are the help desk's own (1
billing ... 5 refunds). Split by time, as a router is deployed: trained on last quarter's
tickets, validated at the end of each epoch on this month's, when the refunds queue, opened
this month, already takes a share of the tickets."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

QUEUES = {1: "billing", 2: "login", 3: "shipping", 4: "bug reports", 5: "refunds"}
FEATURES = 64


def tickets(n, queue_ids, seed):
    """(features, queue ids): tickets of the given queues, each queue its own word profile."""
    g = torch.Generator().manual_seed(seed)
    profiles = 2.0 * torch.randn(len(QUEUES) + 1, FEATURES, generator=torch.Generator().manual_seed(11))
    queue = torch.tensor(queue_ids)[torch.randint(len(queue_ids), (n,), generator=g)]
    x = profiles[queue] + torch.randn(n, FEATURES, generator=g)
    return TensorDataset(x, queue)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    last_quarter = tickets(1600, [1, 2, 3, 4], args.seed)
    this_month = tickets(400, [1, 2, 3, 4, 5], args.seed + 1)
    train_loader = DataLoader(last_quarter, batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(this_month, batch_size=100)

    model = nn.Sequential(nn.Linear(FEATURES, 128), nn.ReLU(), nn.Dropout(0.1),
                          nn.Linear(128, len(QUEUES)))
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()
    step = 0
    for epoch in range(args.epochs):
        model.train()
        for x, queue_id in train_loader:
            target = queue_id - 1
            loss = criterion(model(x), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % 10 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        model.eval()
        val_loss = correct = 0.0
        with torch.no_grad():
            for x, queue_id in val_loader:
                target = queue_id - 1
                logits = model(x)
                val_loss += criterion(logits, target).item() * len(x)
                correct += (logits.argmax(1) == target).sum().item()
        print(f"epoch {epoch} val_loss {val_loss / len(this_month):.4f} val_acc {correct / len(this_month):.3f}")


if __name__ == "__main__":
    main()
