"""A tabular classification task solved with an MLP; each epoch reports accuracy on the
training split (the same rows, re-read in order with the model in eval mode) beside accuracy on
a held-out test split that shares no row with it. The gap between the two is the usual
over-fitting check."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, Subset, TensorDataset


def make_table(n_rows, seed):
    g = torch.Generator().manual_seed(seed)
    numeric = torch.randn(n_rows, 10, generator=g)
    category = torch.randint(0, 5, (n_rows,), generator=g)
    onehot = nn.functional.one_hot(category, 5).float()
    score = numeric[:, 0] * numeric[:, 1] + numeric[:, 2] - 0.5 * category.float() + 0.3 * torch.randn(n_rows, generator=g)
    label = (score > score.median()).long()
    return TensorDataset(torch.cat([numeric, onehot], 1), label)


def accuracy(model, loader):
    model.eval()
    hits = total = 0
    with torch.no_grad():
        for features, label in loader:
            hits += (model(features).argmax(1) == label).sum().item()
            total += label.numel()
    return hits / total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--test-fraction", type=float, default=0.25)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    table = make_table(640, args.seed)
    order = torch.randperm(len(table), generator=torch.Generator().manual_seed(args.seed))
    n_test = int(len(table) * args.test_fraction)
    test_idx, train_idx = order[:n_test].tolist(), order[n_test:].tolist()
    assert not set(test_idx) & set(train_idx)
    train_set, test_set = Subset(table, train_idx), Subset(table, test_idx)

    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    train_eval_loader = DataLoader(train_set, batch_size=256, shuffle=False)
    test_loader = DataLoader(test_set, batch_size=256, shuffle=False)
    print(f"{len(train_set)} training rows, {len(test_set)} test rows")

    model = nn.Sequential(
        nn.Linear(15, 64), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(64, 64), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(64, 2),
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(1, args.epochs + 1):
        model.train()
        epoch_loss = 0.0
        for features, label in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(features), label)
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
            step += 1
            if step % 10 == 0:
                print(f"step {step} loss {loss.item():.4f}")
        train_acc = accuracy(model, train_eval_loader)
        test_acc = accuracy(model, test_loader)
        print(f"epoch {epoch} loss {epoch_loss / len(train_loader):.4f} "
              f"train_acc {train_acc:.3f} test_acc {test_acc:.3f}")


if __name__ == "__main__":
    main()
