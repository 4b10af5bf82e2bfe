"""A two-layer classifier of 2-D points into three interleaved spirals, written with no nn.Module
and no torch.optim: the weights are tensors made with requires_grad, the forward is matrix
products, and the update is heavy-ball momentum with weight decay on the matrices, written by
hand under torch.no_grad(). The gradients come from loss.backward() with the .grad buffers
zeroed in place (even seeds) or from torch.autograd.grad(loss, params) (odd seeds). Held-out
accuracy every 50 steps."""
import argparse
import math

import torch


def spirals(n_per_class, seed):
    g = torch.Generator().manual_seed(seed)
    xs, ys = [], []
    for c in range(3):
        r = torch.rand(n_per_class, generator=g)
        angle = 4.0 * r + c * 2.0 * math.pi / 3 + 0.2 * torch.randn(n_per_class, generator=g)
        xs.append(torch.stack([r * torch.cos(angle), r * torch.sin(angle)], dim=1))
        ys.append(torch.full((n_per_class,), c, dtype=torch.long))
    x, y = torch.cat(xs), torch.cat(ys)
    order = torch.randperm(len(x), generator=g)
    return x[order], y[order]


def init(fan_in, fan_out):
    return (torch.randn(fan_in, fan_out) * math.sqrt(2.0 / fan_in)).requires_grad_()


def logits_of(params, x):
    w1, b1, w2, b2 = params
    return torch.relu(x @ w1 + b1) @ w2 + b2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=None, help="ignored: the run is counted in steps")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--weight-decay", type=float, default=1e-4)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    use_autograd = args.seed % 2 == 1

    x, y = spirals(400, args.seed)
    x_train, y_train, x_val, y_val = x[:1000], y[:1000], x[1000:], y[1000:]
    params = [init(2, 64), torch.zeros(64, requires_grad=True),
              init(64, 3), torch.zeros(3, requires_grad=True)]
    decayed = [True, False, True, False]
    velocity = [torch.zeros_like(p) for p in params]

    for step in range(1, args.steps + 1):
        idx = torch.randint(0, len(x_train), (args.batch_size,))
        loss = torch.nn.functional.cross_entropy(logits_of(params, x_train[idx]), y_train[idx])
        if use_autograd:
            grads = torch.autograd.grad(loss, params)
        else:
            for p in params:
                if p.grad is not None:
                    p.grad.zero_()
            loss.backward()
            grads = [p.grad for p in params]
        with torch.no_grad():
            for p, g, v, decay in zip(params, grads, velocity, decayed):
                if decay:
                    g = g + args.weight_decay * p
                v.mul_(args.momentum).add_(g)
                p.sub_(args.lr * v)
        if step % 50 == 0:
            with torch.no_grad():
                acc = (logits_of(params, x_val).argmax(1) == y_val).float().mean().item()
            print(f"step {step} loss {loss.item():.4f} val_acc {acc:.3f}")


if __name__ == "__main__":
    main()
