"""What `mldebug run`'s probes cost per training step, side by side in one pair of processes:

    plain    the training program alone
    watched  the same program started the way `mldebug run` starts it (torch/run first on
             PYTHONPATH, MLDEBUG_RUN_DIR set, MLDEBUG_RUN_STEPS=0: every step observed)

on a ~5M-parameter GPT-2 (GPT2LMHeadModel from torch/bench/gpt2-5m/config.json), batch 8 x 128
drawn from a DataLoader, AdamW, on the CPU or (`--device cuda`) a GPU, where each step ends with
the loss read back (`loss.item()`), so a step's time holds its GPU work. Both processes are started at once and step in lockstep
(the parent lets one step, then the other), so drift on a busy machine hits them alike. The
first HEAVY steps (the probes' heavy steps, plus warm-up) are reported apart; the median of the
later steps of each process is compared.

    python torch/bench/run_overhead.py [--steps 20] [--threads 2] [--device cuda] [--window cycle]
                                       [--model mlp] [--hidden 256] [--repeat 5]

`--repeat R` runs R such pairs of fresh processes one after the other (the first to step in a
round alternating) and ends with the median, smallest and largest of their per-round-ratio
medians: on a machine where other work runs, one pair's figure moves by several percent.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "gpt2-5m")
RUN = os.path.normpath(os.path.join(HERE, "..", "run"))
HEAVY = 4  # the probes' 3 heavy steps and one more for the allocator to settle


def child(threads, device, model_name="gpt2", hidden=256):
    """One training process: a step each time the parent writes a line; prints its seconds."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    if model_name == "mlp":  # a step of about a millisecond: the probes' fixed cost shows most
        return _child_mlp(torch, DataLoader, TensorDataset, device, hidden)
    from transformers import AutoConfig, GPT2LMHeadModel

    model = GPT2LMHeadModel(AutoConfig.from_pretrained(CONFIG)).to(device)
    ids = torch.randint(0, model.config.vocab_size, (8 * 64, 128),
                        generator=torch.Generator().manual_seed(0))
    loader = DataLoader(TensorDataset(ids), batch_size=8, shuffle=True)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    batches = iter(loader)
    print("ready", flush=True)
    for _ in sys.stdin:
        started = time.perf_counter()
        try:
            (batch,) = next(batches)
        except StopIteration:
            batches = iter(loader)
            (batch,) = next(batches)
        batch = batch.to(device)
        loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        print(json.dumps({"s": time.perf_counter() - started, "loss": loss.item()}), flush=True)



def _child_mlp(torch, DataLoader, TensorDataset, device, hidden=256):
    nn = torch.nn
    model = nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                          nn.Linear(hidden, 10)).to(device)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(64 * 64, 64, generator=g), torch.randint(0, 10, (64 * 64,), generator=g)
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    batches = iter(loader)
    print("ready", flush=True)
    for _ in sys.stdin:
        started = time.perf_counter()
        try:
            xb, yb = next(batches)
        except StopIteration:
            batches = iter(loader)
            xb, yb = next(batches)
        loss = torch.nn.functional.cross_entropy(model(xb.to(device)), yb.to(device))
        loss.backward()
        opt.step()
        opt.zero_grad()
        print(json.dumps({"s": time.perf_counter() - started, "loss": loss.item()}), flush=True)


def contract_version():
    """The trace contract version from its one definition (`TRACE_VERSION` in
    crates/doctor/src/trace/records.rs), as the binary hands it to the probes."""
    records = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "crates",
                           "doctor", "src", "trace", "records.rs")
    with open(records) as f:
        return re.search(r"pub const TRACE_VERSION: u32 = (\d+);", f.read()).group(1)

def start(watched, threads, device, window=None, model="gpt2", hidden=256):
    env = dict(os.environ)
    # glibc raises its mmap threshold after freeing a large block: the probes' heavy-step copies
    # did that in the watched process only, whose later steps then reused heap memory where the
    # plain one mapped and faulted in pages anew (the watched one ran a 13 ms MLP step 20%
    # faster). One fixed threshold for both (32 MiB, glibc's largest) takes that out.
    env.setdefault("MALLOC_MMAP_THRESHOLD_", str(32 << 20))
    for key in ("MLDEBUG_RUN_DIR", "MLDEBUG_RUN_STEPS", "MLDEBUG_RUN_CONTRACT",
                "MLDEBUG_RUN_WINDOW", "MLDEBUG_RUN_SECONDS", "MLDEBUG_RUN_VERDICT_STEP"):
        env.pop(key, None)
    trace_dir = None
    if watched:
        trace_dir = tempfile.mkdtemp(prefix="mldebug-run-bench-")
        env["PYTHONPATH"] = os.pathsep.join([RUN] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env.update(MLDEBUG_RUN_DIR=trace_dir, MLDEBUG_RUN_STEPS="0",
                   MLDEBUG_RUN_CONTRACT=contract_version())
        if window == "cycle":  # `--steps auto`'s window, its caps out of reach (no evaluation)
            env.update(MLDEBUG_RUN_WINDOW="cycle", MLDEBUG_RUN_STEPS="1000000",
                       MLDEBUG_RUN_SECONDS="86400")
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", "--threads",
                             str(threads), "--device", device, "--model", model,
                             "--hidden", str(hidden)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            env=env, text=True)
    return proc, trace_dir


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20, help="steps per process, heavy ones included")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    ap.add_argument("--watched-first", action="store_true",
                    help="the watched process steps first in each round (default: the plain one)")
    ap.add_argument("--window", choices=["steps", "cycle"], default="steps",
                    help="the watched process's window: every step (steps 0), or the cycle "
                         "window of `--steps auto` (its light phase: this loop never evaluates)")
    ap.add_argument("--hidden", type=int, default=256,
                    help="the MLP's hidden width (a longer step: 512, 1024)")
    ap.add_argument("--model", choices=["gpt2", "mlp"], default="gpt2",
                    help="the GPT-2-5M script, or a ~85k-parameter MLP (batch 64, ~1 ms a step)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="pairs of fresh processes, one after the other, summarised at the end")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.threads, args.device, args.model, args.hidden)
        return
    ratios, totals = [], []
    for rep in range(args.repeat):
        watched_first = args.watched_first != (rep % 2 == 1)
        paired, total = measure(args, watched_first)
        ratios.append(paired)
        totals.append(total)
    if args.repeat > 1:
        for name, got in (("median of the per-round ratios", ratios),
                          ("total time ratio", totals)):
            got.sort()
            print("%d pairs, %s: median %.3f, smallest %.3f, largest %.3f"
                  % (len(got), name, statistics.median(got), got[0], got[-1]))


def measure(args, watched_first):
    """One pair of processes stepped in lockstep; prints its figures, returns the median of
    the per-round ratios."""
    order = ["watched", "plain"] if watched_first else ["plain", "watched"]
    procs = {name: start(name == "watched", args.threads, args.device, args.window, args.model,
                         args.hidden)
             for name in order}
    for proc, _ in procs.values():
        if proc.stdout.readline().strip() != "ready":
            sys.exit("a training process did not start")
    times = {name: [] for name in procs}
    losses = {name: [] for name in procs}
    for _ in range(args.steps):
        for name, (proc, _) in procs.items():
            proc.stdin.write("step\n")
            proc.stdin.flush()
            answer = json.loads(proc.stdout.readline())
            times[name].append(answer["s"])
            losses[name].append(answer["loss"])
    for proc, _ in procs.values():
        proc.stdin.close()
        proc.wait()
    traces = os.listdir(procs["watched"][1])
    plain, watched = (statistics.median(times[n][HEAVY:]) for n in ("plain", "watched"))
    heavy = [w / p for w, p in zip(times["watched"][:3], times["plain"][:3])]
    print("model: %s, device: %s, steps per process: %d (the first %d apart), threads: %d, "
          "first in a round: %s, window: %s" % (args.model, args.device, args.steps, HEAVY,
                                                args.threads, order[0], args.window))
    print("median step, later steps: plain %.1f ms, watched %.1f ms, ratio %.3f"
          % (plain * 1e3, watched * 1e3, watched / plain))
    paired = statistics.median(w / p for w, p in zip(times["watched"][HEAVY:], times["plain"][HEAVY:]))
    print("median of the per-round ratios (drift within a round cancels): %.3f" % paired)
    # Under a cadence (cycle window) most light steps are unmeasured: the median is one of those,
    # the total holds the measured ones too. Steps whose time is more than 10x the process's
    # median (a pause of the machine, not of the step) are left out of both totals.
    keep = [i for i in range(HEAVY, len(times["plain"]))
            if max(times["plain"][i] / plain, times["watched"][i] / watched) < 10]
    total = sum(times["watched"][i] for i in keep) / sum(times["plain"][i] for i in keep)
    print("total time of the later steps, watched / plain (measured steps included): %.3f"
          % total)
    print("heavy steps 1-3, ratio each: %s" % ", ".join("%.2f" % r for r in heavy))
    print("losses equal in every step: %s; trace files: %d"
          % (losses["plain"] == losses["watched"], len(traces)))
    return paired, total


if __name__ == "__main__":
    main()
