"""A small GAN on 2-D points: the generator maps Gaussian noise to points that should look like
samples from a tilted, shifted Gaussian; the discriminator tells real points from generated ones."""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

NOISE_DIM = 4


def real_points(n, seed):
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(n, 2, generator=g)
    scale = torch.tensor([[1.0, 0.0], [0.6, 0.4]])
    return z @ scale + torch.tensor([2.0, -1.0])


def mlp(inp, hidden, out):
    return nn.Sequential(
        nn.Linear(inp, hidden), nn.LeakyReLU(0.2),
        nn.Linear(hidden, hidden), nn.LeakyReLU(0.2),
        nn.Linear(hidden, out),
    )


def moments_gap(fake, real):
    """Distance between the first two moments of two point clouds."""
    mean_gap = (fake.mean(0) - real.mean(0)).norm()
    cov_gap = (torch.cov(fake.T) - torch.cov(real.T)).norm()
    return mean_gap.item(), cov_gap.item()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--log-every", type=int, default=10)
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    data = real_points(1536, args.seed)
    held_out = real_points(1000, args.seed + 1000)

    G = mlp(NOISE_DIM, 32, 2)
    D = mlp(2, 32, 1)
    opt_g = torch.optim.Adam(G.parameters(), lr=args.lr, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), lr=args.lr, betas=(0.5, 0.999))

    fixed_noise = torch.randn(1000, NOISE_DIM)
    step = 0
    for epoch in range(args.epochs):
        perm = torch.randperm(len(data))
        for i in range(0, len(data), args.batch_size):
            real = data[perm[i:i + args.batch_size]]
            n = len(real)
            ones, zeros = torch.ones(n, 1), torch.zeros(n, 1)

            # Discriminator: real -> 1, fake -> 0; the fake batch is detached so that this
            # step does not push gradients into the generator.
            fake = G(torch.randn(n, NOISE_DIM))
            d_loss = (F.binary_cross_entropy_with_logits(D(real), ones)
                      + F.binary_cross_entropy_with_logits(D(fake.detach()), zeros))
            opt_d.zero_grad()
            d_loss.backward()
            opt_d.step()

            # Generator: make the discriminator call the fakes real (non-saturating loss).
            g_loss = F.binary_cross_entropy_with_logits(D(fake), ones)
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()

            step += 1
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} d_loss {d_loss.item():.4f} g_loss {g_loss.item():.4f}")

        G.eval()
        with torch.no_grad():
            mean_gap, cov_gap = moments_gap(G(fixed_noise), held_out)
        G.train()
        print(f"epoch {epoch} mean_gap {mean_gap:.4f} cov_gap {cov_gap:.4f}")


if __name__ == "__main__":
    main()
