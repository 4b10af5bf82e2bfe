"""Data-parallel training (DistributedDataParallel over gloo, CPU) of an MLP classifier on
synthetic data with gradient accumulation: four micro-batches per optimizer step, the gradients
all-reduced only on the last one (DDP's no_sync on the others).

    torchrun --standalone --nproc_per_node 2 <this script>
"""

import argparse
import contextlib

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def make_dataset(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 16, generator=g)
    y = (x[:, :4] @ torch.randn(4, 4, generator=g)).argmax(dim=1)
    return TensorDataset(x, y)


def build_model():
    return nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--accumulation-steps", type=int, default=4)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(args.seed)

    dataset = make_dataset(320, args.seed)
    sampler = DistributedSampler(dataset, shuffle=True, seed=args.seed)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)

    model = DDP(build_model())
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    step = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for i, (x, y) in enumerate(loader):
            last_micro_batch = (i + 1) % args.accumulation_steps == 0
            with contextlib.nullcontext() if last_micro_batch else model.no_sync():
                loss = criterion(model(x), y) / args.accumulation_steps
                loss.backward()
            if last_micro_batch:
                optimizer.step()
                optimizer.zero_grad()
                step += 1
                if rank == 0 and step % args.log_every == 0:
                    print(f"epoch {epoch} step {step} loss {loss.item() * args.accumulation_steps:.4f}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
