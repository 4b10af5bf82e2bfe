"""Train a bigram language model (4096-token vocabulary) on synthetic token streams and report
the token accuracy of each epoch."""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

VOCAB, SEQ_LEN = 4096, 65


def make_streams(n, seed):
    """Each token is followed by one of four fixed successors."""
    g = torch.Generator().manual_seed(seed)
    successors = torch.randint(0, VOCAB, (VOCAB, 4), generator=g)
    rows = torch.empty(n, SEQ_LEN, dtype=torch.long)
    rows[:, 0] = torch.randint(0, VOCAB, (n,), generator=g)
    for t in range(1, SEQ_LEN):
        pick = torch.randint(0, 4, (n,), generator=g)
        rows[:, t] = successors[rows[:, t - 1], pick]
    return rows


class BigramLM(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        self.proj = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, VOCAB)

    def forward(self, tokens):
        return self.out(torch.tanh(self.proj(self.embed(tokens))))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--batch-size", type=int, default=24)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    loader = DataLoader(TensorDataset(make_streams(720, args.seed)), batch_size=args.batch_size, shuffle=True)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = BigramLM().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        correct, total = 0, 0
        for (rows,) in loader:
            rows = rows.to(device)
            inputs, targets = rows[:, :-1], rows[:, 1:]
            logits = model(inputs)
            loss = criterion(logits.reshape(-1, VOCAB), targets.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            correct += (logits.argmax(dim=-1) == targets).sum().item()
            total += targets.numel()
            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        print(f"epoch {epoch} token accuracy {correct / total:.3f}")


if __name__ == "__main__":
    main()
