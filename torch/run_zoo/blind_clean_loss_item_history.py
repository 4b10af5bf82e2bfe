"""Logistic regression + one hidden layer written with hand-made parameters and a hand-written SGD
update (no torch.optim). The loss history is kept as Python floats and averaged every 20 steps."""
import argparse

import torch


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 6, generator=g)
    y = ((x[:, 0] * x[:, 1] + x[:, 2] - 0.5 * x[:, 3]) > 0).float()
    return x, y


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=None, help="ignored: the length of this run is counted in steps")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--lr", type=float, default=0.5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    x, y = make_data(4096, args.seed)

    w1 = (torch.randn(6, 32) / 6 ** 0.5).requires_grad_()
    b1 = torch.zeros(32, requires_grad=True)
    w2 = (torch.randn(32) / 32 ** 0.5).requires_grad_()
    b2 = torch.zeros((), requires_grad=True)
    params = [w1, b1, w2, b2]

    history = []
    for step in range(1, args.steps + 1):
        idx = torch.randint(0, len(x), (128,))
        h = torch.tanh(x[idx] @ w1 + b1)
        logits = h @ w2 + b2
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y[idx])
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= args.lr * p.grad
        history.append(loss.item())
        if step % 20 == 0:
            print(f"step {step} avg_loss(last 20) {sum(history[-20:]) / 20:.4f}")
    print(f"mean loss over run {sum(history) / len(history):.4f}")


if __name__ == "__main__":
    main()
