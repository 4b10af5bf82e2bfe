"""How long `mldebug check all --torch hf:torch/bench/gpt2-5m` takes (a ~5M-parameter GPT-2),
and how much of it is the driver's start-up (Python, import torch and transformers, the model
built: the `startup_s` of the driver's hello line). Wall time and the CPU time of the child
processes are both printed: on a shared machine the CPU time is the steadier number.

    python torch/bench/check_all_time.py [--bin target/release/mldebug] [--python PY] [--runs 3]

--python is the interpreter with torch and transformers (default: this one).
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CONFIG = os.path.join(HERE, "gpt2-5m")


def timed(cmd, stdin=None, env=None):
    """(wall seconds, child CPU seconds, completed process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc


def startup(python):
    """The driver's hello line for a request with no checks: start-up alone."""
    request = {"contract": 2, "target": {"kind": "hf", "path": CONFIG}, "lora": None,
               "checks": [], "seed": 0, "steps": 200, "learning_rate": 0.003, "device": "cpu"}
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "torch", "driver"))
    wall, cpu, proc = timed([python, "-m", "mldebug_driver"], json.dumps(request), env)
    if proc.returncode != 0:
        sys.exit("driver failed (%d): %s" % (proc.returncode, proc.stderr[-2000:]))
    hello = next(e for e in map(json.loads, proc.stdout.splitlines()) if e["event"] == "hello")
    return wall, cpu, hello


def check_all(binary, python):
    cmd = [binary, "--json", "check", "all", "--torch", "hf:" + CONFIG, "--python", python]
    wall, cpu, proc = timed(cmd)
    if proc.returncode not in (0, 1):
        sys.exit("mldebug failed (%d): %s" % (proc.returncode, proc.stderr[-2000:]))
    report = json.loads(proc.stdout)
    return wall, cpu, {c["check"]: c["status"] for c in report["checks"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "mldebug"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    rows = {"driver start-up": [], "check all": []}
    for i in range(args.runs):
        wall, cpu, hello = startup(args.python)
        rows["driver start-up"].append((wall, cpu, hello["startup_s"]))
        wall, cpu, statuses = check_all(args.bin, args.python)
        rows["check all"].append((wall, cpu, None))
        print("run %d: start-up %.1f s wall (%.1f s in hello, %.1f s CPU); check all %.1f s wall "
              "(%.1f s CPU): %s" % (i + 1, rows["driver start-up"][-1][0], hello["startup_s"],
                                    rows["driver start-up"][-1][1], wall, cpu,
                                    " ".join("%s=%s" % kv for kv in statuses.items())))
    print("GPT-2 %.1fM parameters, torch %s, transformers %s, %d runs, medians:"
          % (hello["parameters"] / 1e6, hello["torch"], hello["transformers"], args.runs))
    for name, values in rows.items():
        print("  %-16s %6.1f s wall %6.1f s CPU" % (name, statistics.median(v[0] for v in values),
                                                     statistics.median(v[1] for v in values)))


if __name__ == "__main__":
    main()
