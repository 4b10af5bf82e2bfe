"""What watching every module for NaN/inf costs per training step, side by side in one run:

    plain            the training step alone
    mldebug          the driver's FrameRecorder (mldebug_driver.frames): forward hooks writing
                     abs-min/abs-max/finite counts into device tensors, read back once a step
    DUO              transformers' DebugUnderflowOverflow (forward hooks, host reads per module)
    anomaly          torch.autograd.detect_anomaly()

on a ~5M-parameter GPT-2 (GPT2LMHeadModel from torch/bench/gpt2-5m/config.json, the model
check_all_time.sh times), batch 8 x 128, AdamW, CPU. The modes run interleaved, one step each
per round, so drift on a busy machine hits them alike; the median step time of each mode is
reported with its ratio to plain.

    python torch/bench/nan_trace_overhead.py [--rounds 15] [--threads 2] [--driver PATH]

--driver takes the FrameRecorder from another folder holding the package mldebug_driver
(default: torch/driver).
"""

import argparse
import importlib
import os
import statistics
import sys
import time

import torch


HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "gpt2-5m")


def load_frames(folder):
    """`mldebug_driver.frames` from `folder`."""
    sys.path.insert(0, os.path.abspath(folder))
    return importlib.import_module("mldebug_driver.frames")


def gpt2(seed):
    from transformers import AutoConfig, GPT2LMHeadModel

    torch.manual_seed(seed)
    return GPT2LMHeadModel(AutoConfig.from_pretrained(CONFIG))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--driver", default=os.path.join(HERE, "..", "driver"))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    from transformers.debug_utils import DebugUnderflowOverflow

    frames = load_frames(args.driver)
    g = torch.Generator().manual_seed(0)
    models = {name: gpt2(0) for name in ("plain", "mldebug", "DUO", "anomaly")}
    ids = torch.randint(0, models["plain"].config.vocab_size, (8, 128), generator=g)
    params = sum(p.numel() for p in models["plain"].parameters())
    opts = {n: torch.optim.AdamW(m.parameters(), lr=1e-4) for n, m in models.items()}
    recorder = frames.FrameRecorder(models["mldebug"])
    DebugUnderflowOverflow(models["DUO"])

    def step(name):
        model, opt = models[name], opts[name]
        if name == "anomaly":
            with torch.autograd.detect_anomaly(check_nan=True):
                loss = model(input_ids=ids, labels=ids).loss
                loss.backward()
        else:
            loss = model(input_ids=ids, labels=ids).loss
            if name == "mldebug":
                recorder.record("loss", "loss", loss)
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if name == "mldebug":
            frames = recorder.flush()
            assert all(f["non_finite"] == 0 for f in frames)

    for name in models:  # warm-up
        step(name)
    times = {name: [] for name in models}
    for r in range(args.rounds):
        for name in models:
            t0 = time.perf_counter()
            step(name)
            times[name].append(time.perf_counter() - t0)
        print("round %d/%d: %s" % (r + 1, args.rounds, " ".join(
            "%s %.2fs" % (n, ts[-1]) for n, ts in times.items())), file=sys.stderr, flush=True)
    base = statistics.median(times["plain"])
    print("GPT-2 %.1fM parameters, batch 8 x 128, %d threads, %d interleaved rounds, torch %s"
          % (params / 1e6, args.threads, args.rounds, torch.__version__))
    print("%-10s %12s %8s" % ("mode", "median step", "ratio"))
    for name, ts in times.items():
        m = statistics.median(ts)
        print("%-10s %10.1f ms %7.2fx" % (name, 1000 * m, m / base))
    print("mldebug traced %d modules" % recorder.traced)


if __name__ == "__main__":
    main()
