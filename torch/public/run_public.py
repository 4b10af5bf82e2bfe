#!/usr/bin/env python3
"""Runs public training programs, unmodified but for a few lines of CPU/size adjustment, under
`mldebug run`, and prints one line per program: program, command, exit code, findings.

The public code is not part of this repository. Point the script at checkouts of it:

    python torch/public/run_public.py \
        --checkout pytorch/examples=/path/to/examples \
        --checkout karpathy/nanoGPT=/path/to/nanoGPT \
        --checkout karpathy/minGPT=/path/to/minGPT \
        --checkout OrderLab/TrainCheck-Evaluation-Workloads=/path/to/workloads \
        --checkout huggingface/transformers=/path/to/transformers \
        [--only NAME ...] [--mldebug target/debug/mldebug] [--out DIR]

    python torch/public/run_public.py --list          # the programs it knows, and their commands

or run any command in a copy of any checkout (no adjustment):

    python torch/public/run_public.py --dir /path/to/checkout [--cd sub/dir] [--steps N] -- python train.py

Each program runs in a temporary copy of its checkout's folder (the checkout itself is never
written). What is changed there is listed below beside the program's command, as `edit`
(a literal replacement that must match exactly the given number of times, so that a changed
upstream file is reported instead of silently run unadjusted), `write` (a file this script
generates: a small corpus, a stub for a module the program imports but does not need to train,
such as a plotting library or the tracing library of an evaluation harness) or `prepare` (a
command run before, without mldebug, e.g. a data preparation script). A program whose
adjustment no longer applies, or whose module is missing from the interpreter, is reported as
`skipped` with the reason.

`python` and `torchrun` are taken from PATH: put the torch interpreter's folder first
(`PATH=$(dirname $(bash .ci/torch-venv)):$PATH`). The JSON report and the program's output of
each run are kept under --out (default: a temporary folder, printed at the end).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Stubs for modules a program imports for something other than training.
MATPLOTLIB_STUB = {
    "matplotlib/__init__.py": "def use(*args, **kwargs):\n    pass\n",
    "matplotlib/pyplot.py": (
        "def __getattr__(name):\n"
        "    return lambda *args, **kwargs: None\n"
    ),
}
# TrainCheck's workloads call its tracing library to mark stages; it does nothing for training.
TRAINCHECK_STUB = {
    "traincheck/__init__.py": "def annotate_stage(*args, **kwargs):\n    pass\n",
    "traincheck/instrumentor.py": "meta_vars = {}\n",
}
# nanoGPT's data preparation imports requests to download input.txt, which is written here.
REQUESTS_STUB = {
    "data/shakespeare_char/requests.py": (
        "def get(*args, **kwargs):\n"
        "    raise RuntimeError('no network: input.txt is written beforehand')\n"
    ),
}


def corpus(paths_glob_root, exts=(".py", ".md", ".txt"), limit=200_000):
    """A small text corpus made of the checkout's own source and documentation files."""

    def make(checkout):
        parts = []
        size = 0
        for folder, dirs, files in sorted(os.walk(os.path.join(checkout, paths_glob_root))):
            dirs.sort()
            for name in sorted(files):
                if not name.endswith(exts):
                    continue
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                    text = "".join(c for c in f.read() if c.isascii())
                parts.append(text)
                size += len(text)
                if size >= limit:
                    return "\n".join(parts)[:limit]
        return "\n".join(parts)[:limit]

    return make


def package_corpus(module, limit=200_000):
    """A small text corpus made of an installed package's source files (found by `python` on PATH)."""

    def make(_checkout):
        python = shutil.which("python") or sys.executable
        where = subprocess.run([python, "-c", f"import os, {module} as m; print(os.path.dirname(m.__file__))"],
                               capture_output=True, text=True)
        if where.returncode != 0:
            raise Skip(f"{module} is not importable to write a corpus from it")
        folder = where.stdout.strip()
        return corpus(".", limit=limit)(folder)

    return make


def head_of(path, lines):
    """The first lines of a file of the checkout (a training split cut from a shipped split)."""

    def make(checkout):
        with open(os.path.join(checkout, path), encoding="utf-8") as f:
            return "".join(f.readlines()[:lines])

    return make


def gpt2_byte_tokenizer(_checkout):
    """A GPT-2 byte-level tokenizer with no merges (one token per byte, and <|endoftext|>)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\u00a1"), ord("\u00ac") + 1)) \
        + list(range(ord("\u00ae"), ord("\u00ff") + 1))
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            chars.append(256 + extra)
            extra += 1
    vocab = {chr(c): i for i, c in enumerate(chars)}
    vocab["<|endoftext|>"] = len(vocab)
    return json.dumps(vocab)


TINY_GPT2 = json.dumps({"model_type": "gpt2", "vocab_size": 257, "n_positions": 128, "n_embd": 64,
                        "n_layer": 2, "n_head": 2, "bos_token_id": 256, "eos_token_id": 256})


def stubs(files):
    return [("write", path, text) for path, text in files.items()]


def ddp_cpu_edits(file, set_device, nccl):
    return [
        ("edit", file, set_device, "pass", 1),
        ("edit", file, nccl, nccl.replace('"nccl"', '"gloo"'), 1),
    ]


WLM = "word_language_model"
TSP = "time_sequence_prediction"
DDP_TUT = "distributed/ddp-tutorial-series/multigpu_torchrun.py"
TCW = "fp_rate/workloads"

# torch.save of a NumPy array, read back with torch.load, whose weights_only is True since torch 2.6.
TSP_LOAD = [("edit", "train.py", "torch.load('traindata.pt')", "torch.load('traindata.pt', weights_only=False)", 1)]
# pytorch/examples' sine waves are 1000 points long (an LSTMCell per point, 20 closure calls per LBFGS
# step: minutes per step on a shared CPU): 200 here, and 100 points predicted instead of 1000.
TSP_SHORT = [("edit", "generate_sine_wave.py", "L = 1000", "L = 200", 1),
             ("edit", "train.py", "future = 1000", "future = 100", 1)]

NANOGPT_SMALL = ["python", "train.py", "config/train_shakespeare_char.py", "--device=cpu", "--compile=False",
                 "--dtype=float32", "--n_layer=2", "--n_head=2", "--n_embd=64", "--block_size=64", "--batch_size=16",
                 "--lr_decay_iters=200", "--warmup_iters=20", "--eval_interval=100", "--eval_iters=10",
                 "--log_interval=20", "--dropout=0.0"]

# The best model saved whole (torch.save(model)) and loaded back after training.
WHOLE_MODEL_LOAD = ("edit", "main.py", "model = torch.load(f)", "model = torch.load(f, weights_only=False)", 1)

# name -> program. repo: the checkout it needs; cd: the folder copied and run in, relative to the
# checkout; setup: the adjustments; command (run with mldebug's default window, --steps auto: one
# cycle of the program); needs: Python modules the interpreter must have.
PROGRAMS = {
    # --- pytorch/examples ---
    "examples/word_language_model": {
        "repo": "pytorch/examples",
        "cd": WLM,
        # The shipped train.txt is large; its first lines come from valid.txt here.
        "setup": [WHOLE_MODEL_LOAD,
                  ("write", "data/wikitext-2/train.txt", head_of(f"{WLM}/data/wikitext-2/valid.txt", 600))],
        # The default path: SGD written by hand (p.data.add_), LSTM, clipping; smaller width.
        "command": ["python", "main.py", "--emsize", "64", "--nhid", "64", "--epochs", "1"],
    },
    "examples/word_language_model-transformer": {
        "repo": "pytorch/examples",
        "cd": WLM,
        "setup": [WHOLE_MODEL_LOAD,
                  ("write", "data/wikitext-2/train.txt", head_of(f"{WLM}/data/wikitext-2/valid.txt", 600))],
        "command": ["python", "main.py", "--model", "Transformer", "--lr", "5",
                    "--emsize", "64", "--nhid", "64", "--epochs", "1"],
    },
    "examples/word_language_model-adamw": {
        "repo": "pytorch/examples",
        "cd": WLM,
        "setup": [WHOLE_MODEL_LOAD,
                  ("write", "data/wikitext-2/train.txt", head_of(f"{WLM}/data/wikitext-2/valid.txt", 600))],
        # The other update path: torch.optim.AdamW.
        "command": ["python", "main.py", "--use-optimizer", "--lr", "0.002", "--emsize", "64", "--nhid", "64",
                    "--epochs", "1"],
    },
    "examples/regression": {
        "repo": "pytorch/examples",
        "cd": "regression",
        "setup": [],
        "command": ["python", "main.py"],
    },
    "examples/time_sequence_prediction": {
        "repo": "pytorch/examples",
        "cd": TSP,
        # Plots are drawn with matplotlib after each LBFGS step: stubbed.
        "setup": stubs(MATPLOTLIB_STUB) + TSP_LOAD + TSP_SHORT + [("prepare", ["python", "generate_sine_wave.py"])],
        "command": ["python", "train.py", "--steps", "4"],
    },
    "examples/mnist": {
        "repo": "pytorch/examples",
        "cd": "mnist",
        "setup": [],
        "command": ["python", "main.py", "--epochs", "1"],
        "needs": ["torchvision"],
    },
    "examples/ddp-tutorial multigpu_torchrun": {
        "repo": "pytorch/examples",
        "cd": "distributed/ddp-tutorial-series",
        "setup": ddp_cpu_edits(
            "multigpu_torchrun.py",
            'torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))',
            'init_process_group(backend="nccl")',
        ) + [
            ("edit", "multigpu_torchrun.py", "DDP(self.model, device_ids=[self.gpu_id])", "DDP(self.model)", 1),
            ("edit", "multigpu_torchrun.py", "model.to(self.gpu_id)", "model", 1),
            ("edit", "multigpu_torchrun.py", "source.to(self.gpu_id)", "source", 1),
            ("edit", "multigpu_torchrun.py", "targets.to(self.gpu_id)", "targets", 1),
        ],
        "command": ["torchrun", "--standalone", "--nproc_per_node", "2", "multigpu_torchrun.py", "2", "1"],
    },
    # --- karpathy/nanoGPT ---
    "nanoGPT shakespeare_char": {
        "repo": "karpathy/nanoGPT",
        "cd": ".",
        "setup": stubs(REQUESTS_STUB) + [
            ("write", "data/shakespeare_char/input.txt", corpus(".")),
            ("prepare", ["python", "data/shakespeare_char/prepare.py"]),
        ],
        "command": ["python", "train.py", "config/train_shakespeare_char.py", "--device=cpu", "--compile=False",
                    "--dtype=float32", "--n_layer=2", "--n_head=2", "--n_embd=64", "--block_size=64",
                    "--batch_size=16", "--max_iters=200", "--lr_decay_iters=200", "--warmup_iters=20",
                    "--eval_interval=100", "--eval_iters=10", "--log_interval=20", "--dropout=0.0"],
    },
    "nanoGPT shakespeare_char torchrun": {
        "repo": "karpathy/nanoGPT",
        "cd": ".",
        "setup": stubs(REQUESTS_STUB) + [
            ("write", "data/shakespeare_char/input.txt", corpus(".")),
            ("prepare", ["python", "data/shakespeare_char/prepare.py"]),
            # The DDP branch picks cuda:<local rank>; on CPU the device stays as configured.
            ("edit", "train.py", "device = f'cuda:{ddp_local_rank}'",
             "device = f'cuda:{ddp_local_rank}' if 'cuda' in device else device", 1),
            ("edit", "train.py", "torch.cuda.set_device(device)",
             "torch.cuda.set_device(device) if 'cuda' in device else None", 1),
            ("edit", "train.py", "DDP(model, device_ids=[ddp_local_rank])",
             "DDP(model, device_ids=[ddp_local_rank] if 'cuda' in device else None)", 1),
        ],
        "command": ["torchrun", "--standalone", "--nproc_per_node", "2", "train.py",
                    "config/train_shakespeare_char.py", "--device=cpu", "--compile=False", "--backend=gloo",
                    "--dtype=float32", "--n_layer=2", "--n_head=2", "--n_embd=64", "--block_size=64",
                    "--batch_size=16", "--gradient_accumulation_steps=2", "--max_iters=200",
                    "--lr_decay_iters=200", "--warmup_iters=20", "--eval_interval=100", "--eval_iters=10",
                    "--log_interval=20", "--dropout=0.0"],
    },
    "nanoGPT shakespeare_char compiled": {
        "repo": "karpathy/nanoGPT",
        "cd": ".",
        # torch.compile on CPU (inductor, needs a C++ compiler): the compiled module's forwards.
        "setup": stubs(REQUESTS_STUB) + [
            ("write", "data/shakespeare_char/input.txt", corpus(".")),
            ("prepare", ["python", "data/shakespeare_char/prepare.py"]),
        ],
        "command": [a for a in NANOGPT_SMALL if a != "--compile=False"] + ["--compile=True", "--max_iters=200"],
    },
    "nanoGPT shakespeare_char accumulation+resume": {
        "repo": "karpathy/nanoGPT",
        "cd": ".",
        # 100 iterations first (not watched) to write out-shakespeare-char/ckpt.pt, then resumed to
        # 200 under mldebug, 4 micro-batches per step.
        "setup": stubs(REQUESTS_STUB) + [
            ("write", "data/shakespeare_char/input.txt", corpus(".")),
            ("prepare", ["python", "data/shakespeare_char/prepare.py"]),
            ("prepare", NANOGPT_SMALL + ["--max_iters=100", "--always_save_checkpoint=True"]),
        ],
        "command": NANOGPT_SMALL + ["--max_iters=200", "--init_from=resume", "--gradient_accumulation_steps=4"],
    },
    # --- karpathy/minGPT ---
    "minGPT adder": {
        "repo": "karpathy/minGPT",
        "cd": ".",
        "setup": [],
        # Evaluates on the train and test splits at iteration 0 (every 500), as shipped.
        "command": ["python", "projects/adder/adder.py", "--trainer.max_iters=120",
                    "--system.work_dir=out/adder"],
        "env": {"PYTHONPATH": "."},
    },
    "minGPT chargpt": {
        "repo": "karpathy/minGPT",
        "cd": ".",
        "setup": [("write", "input.txt", corpus("mingpt", limit=60_000))],
        "command": ["python", "projects/chargpt/chargpt.py", "--trainer.max_iters=60",
                    "--model.model_type=None", "--model.n_layer=2", "--model.n_head=2", "--model.n_embd=64",
                    "--data.block_size=64", "--trainer.batch_size=16", "--system.work_dir=out/chargpt"],
        "env": {"PYTHONPATH": "."},
    },
    # --- huggingface/transformers: a no_trainer example, from scratch with a tiny local GPT-2 ---
    # The checkout needs only examples/pytorch/language-modeling/run_clm_no_trainer.py. The edits fit
    # the 2021 version of the script (commit 00661e38a9e1393472adae9ac71f777b74ccdcde, accelerate's
    # backward, AdamW, a linear schedule, one evaluation per epoch) to today's transformers: AdamW is
    # torch's, and --model_name_or_path is optional (the model is built from the tiny config). The
    # corpora are the installed transformers package's own GPT-2 and Llama sources.
    "transformers run_clm_no_trainer": {
        "repo": "huggingface/transformers",
        "cd": "examples/pytorch/language-modeling",
        "setup": [
            ("edit", "run_clm_no_trainer.py", "    AdamW,\n", "", 1),
            ("edit", "run_clm_no_trainer.py", "optimizer = AdamW(", "optimizer = torch.optim.AdamW(", 1),
            ("edit", "run_clm_no_trainer.py", "        required=True,\n", "        required=False,\n", 1),
            ("write", "tiny/config.json", TINY_GPT2),
            ("write", "tiny/vocab.json", gpt2_byte_tokenizer),
            ("write", "tiny/merges.txt", "#version: 0.2\n"),
            ("write", "train.txt", package_corpus("transformers.models.gpt2", limit=150_000)),
            ("write", "valid.txt", package_corpus("transformers.models.llama", limit=30_000)),
        ],
        "command": ["python", "run_clm_no_trainer.py", "--model_type", "gpt2", "--config_name", "tiny",
                    "--tokenizer_name", "tiny", "--train_file", "train.txt", "--validation_file", "valid.txt",
                    "--block_size", "64", "--per_device_train_batch_size", "8", "--per_device_eval_batch_size", "8",
                    "--learning_rate", "1e-3", "--max_train_steps", "60", "--num_warmup_steps", "5",
                    "--seed", "0", "--output_dir", "out"],
        # load_dataset reads the text files (datasets may come from PYTHONPATH: the venv need not have it).
        "needs": ["datasets", "accelerate", "transformers"],
    },
    # --- OrderLab/TrainCheck-Evaluation-Workloads, fp_rate/workloads (the CPU ones) ---
    "traincheck/regression": {
        "repo": "OrderLab/TrainCheck-Evaluation-Workloads",
        "cd": f"{TCW}/regression",
        "setup": stubs(TRAINCHECK_STUB),
        "command": ["python", "main.py"],
    },
    "traincheck/time-sequence-prediction": {
        "repo": "OrderLab/TrainCheck-Evaluation-Workloads",
        "cd": f"{TCW}/time-sequence-prediction",
        "setup": stubs(TRAINCHECK_STUB) + stubs(MATPLOTLIB_STUB) + TSP_LOAD
        + [("prepare", ["python", "generate_sine_wave.py"])],
        "command": ["python", "train.py", "--steps", "4"],
    },
    "traincheck/word-language-model-lstm": {
        "repo": "OrderLab/TrainCheck-Evaluation-Workloads",
        "cd": f"{TCW}/word-language-model-lstm",
        "setup": stubs(TRAINCHECK_STUB) + [WHOLE_MODEL_LOAD]
        + [("write", "data/wikitext-2/train.txt",
            head_of(f"{TCW}/word-language-model-lstm/data/wikitext-2/valid.txt", 600))],
        "command": ["python", "main.py", "--epochs", "1", "--emsize", "64", "--nhid", "64", "--tied"],
    },
    "traincheck/word-language-model-transformer": {
        "repo": "OrderLab/TrainCheck-Evaluation-Workloads",
        "cd": f"{TCW}/word-language-model-transformer",
        "setup": stubs(TRAINCHECK_STUB)
        + [("write", "data/wikitext-2/train.txt",
            head_of(f"{TCW}/word-language-model-transformer/data/wikitext-2/valid.txt", 600))],
        "command": ["python", "main.py", "--epochs", "1", "--model", "Transformer", "--lr", "5",
                    "--emsize", "64", "--nhid", "64"],
    },
    "traincheck/ddp-multigpu": {
        "repo": "OrderLab/TrainCheck-Evaluation-Workloads",
        "cd": f"{TCW}/ddp-multigpu",
        # mp.spawn over torch.cuda.device_count() GPUs: 2 CPU processes over gloo here.
        "setup": stubs(TRAINCHECK_STUB) + ddp_cpu_edits(
            "multigpu.py", "torch.cuda.set_device(rank)",
            'init_process_group(backend="nccl", rank=rank, world_size=world_size)',
        ) + [
            ("edit", "multigpu.py", "world_size = torch.cuda.device_count()", "world_size = 2", 1),
            ("edit", "multigpu.py", "model.to(gpu_id)", "model", 1),
            ("edit", "multigpu.py", "DDP(model, device_ids=[gpu_id])", "DDP(model)", 1),
            ("edit", "multigpu.py", "source.to(self.gpu_id)", "source", 1),
            ("edit", "multigpu.py", "targets.to(self.gpu_id)", "targets", 1),
        ],
        "command": ["python", "multigpu.py", "--batch_size", "8", "1", "2"],
    },
    "traincheck/autocast": {
        "repo": "OrderLab/TrainCheck-Evaluation-Workloads",
        "cd": f"{TCW}/autocast",
        # Written for CUDA (fp16 autocast, GradScaler, CUDA memory timers): CPU and smaller here.
        "setup": stubs(TRAINCHECK_STUB) + [
            ("edit", "main.py", ".cuda()", "", 2),
            ("edit", "main.py", "torch.cuda.empty_cache()", "pass", 1),
            ("edit", "main.py", "torch.cuda.reset_max_memory_allocated()", "pass", 1),
            ("edit", "main.py", "torch.cuda.synchronize()", "pass", 2),
            ("edit", "main.py", "torch.cuda.max_memory_allocated()", "0", 1),
            ("edit", "main.py", "in_size = 4096", "in_size = 256", 1),
            ("edit", "main.py", "out_size = 4096", "out_size = 256", 1),
            ("edit", "main.py", "batch_size = 512 ", "batch_size = 64 ", 1),
            ("edit", "main.py", "torch.cuda.amp.GradScaler(", "torch.amp.GradScaler(device, ", 1),
        ],
        "command": ["python", "main.py"],
    },
}


class Skip(Exception):
    pass


def apply(setup, workdir, checkout, env, log):
    for op in setup:
        kind = op[0]
        if kind == "write":
            _, path, content = op
            text = content(checkout) if callable(content) else content
            dest = os.path.join(workdir, path)
            os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
            with open(dest, "w", encoding="utf-8") as f:
                f.write(text)
        elif kind == "edit":
            _, path, old, new, count = op
            dest = os.path.join(workdir, path)
            with open(dest, encoding="utf-8") as f:
                text = f.read()
            found = text.count(old)
            if found != count:
                raise Skip(f"adjustment no longer applies: {path} has {found} of {old!r}, not {count}")
            with open(dest, "w", encoding="utf-8") as f:
                f.write(text.replace(old, new))
        elif kind == "prepare":
            _, cmd = op
            done = subprocess.run(cmd, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=600)
            if done.returncode != 0:
                raise Skip(f"preparation `{' '.join(cmd)}` exited {done.returncode}")
        else:
            raise ValueError(kind)


def one_line(findings):
    parts = []
    for f in findings:
        if f["severity"] == "info":
            parts.append(f"info {f['symptom']}")
            continue
        summary = " ".join(f.get("summary", "").split())
        if len(summary) > 160:
            summary = summary[:157] + "..."
        parts.append(f"{f['severity']} {f['symptom']}: {summary}")
    return "; ".join(parts) if parts else "none"


def probe_errors(output):
    """Lines of the program's output that come from mldebug's probes (there must be none)."""
    lines = output.splitlines()
    return [line for line in lines if "mldebug_run" in line or "mldebug probe" in line.lower()]


def run_one(name, program, checkout, mldebug, out, python_env, timeout):
    if checkout is None:
        return {"program": name, "command": " ".join(program["command"]),
                "skipped": f"no --checkout {program['repo']}=PATH"}
    missing = [m for m in program.get("needs", []) if not module_available(m)]
    if missing:
        return {"program": name, "command": " ".join(program["command"]),
                "skipped": f"{', '.join(missing)} missing from the interpreter"}
    src = os.path.join(checkout, program["cd"])
    tmp = tempfile.mkdtemp(prefix="mldebug-public-")
    workdir = os.path.join(tmp, "work")
    shutil.copytree(src, workdir, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    env = dict(python_env)
    for key, value in program.get("env", {}).items():
        env[key] = os.path.join(workdir, value) if key == "PYTHONPATH" else value
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
    setup = list(program["setup"])
    try:
        with open(os.path.join(out, f"{slug}.prepare.log"), "w") as log:
            apply(setup, workdir, checkout, env, log)
    except Skip as why:
        shutil.rmtree(tmp, ignore_errors=True)
        return {"program": name, "command": " ".join(program["command"]), "skipped": str(why)}
    steps = ["--steps", str(program["steps"])] if program.get("steps") is not None else []
    argv = [mldebug, "run", "--json", "--color", "never", *steps, "--timeout", str(timeout), "--"] \
        + program["command"]
    started = time.time()
    done = subprocess.run(argv, cwd=workdir, env=env, capture_output=True, text=True)
    seconds = time.time() - started
    with open(os.path.join(out, f"{slug}.json"), "w") as f:
        f.write(done.stdout)
    with open(os.path.join(out, f"{slug}.output.txt"), "w") as f:
        f.write(done.stderr)
    shutil.rmtree(tmp, ignore_errors=True)
    row = {"program": name, "command": " ".join(program["command"]), "exit": done.returncode,
           "seconds": round(seconds, 1)}
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        row["findings"] = f"no JSON report (see {slug}.output.txt)"
        return row
    row["findings"] = one_line(report.get("findings", []))
    row["program_exit"] = (report.get("outcome") or {}).get("exit_code")
    errors = probe_errors(done.stderr)
    if errors:
        row["probe_output"] = errors[:3]
    return row


def module_available(name):
    python = shutil.which("python") or sys.executable
    check = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({name!r}) is None)"
    return subprocess.run([python, "-c", check], capture_output=True).returncode == 0


def print_row(row):
    if "skipped" in row:
        print(f"{row['program']} | {row['command']} | skipped | {row['skipped']}", flush=True)
        return
    line = f"{row['program']} | {row['command']} | exit {row['exit']} | {row['findings']}"
    if row.get("probe_output"):
        line += " | PROBE OUTPUT: " + " / ".join(row["probe_output"])
    print(line, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkout", action="append", default=[], metavar="OWNER/NAME=PATH",
                        help="where a public repository is checked out (repeat)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="run only the programs whose name contains NAME (repeat)")
    parser.add_argument("--list", action="store_true", help="list the programs and their commands")
    parser.add_argument("--dir", help="run the command after -- in a copy of this checkout, unadjusted")
    parser.add_argument("--cd", default=".", help="with --dir: the folder to run in, inside the checkout")
    parser.add_argument("--steps", help="mldebug's --steps for every program (default: mldebug's own)")
    parser.add_argument("--mldebug", default=os.path.join(ROOT, "target", "debug", "mldebug"))
    parser.add_argument("--timeout", type=int, default=600, help="mldebug's --timeout per program")
    parser.add_argument("--out", help="folder for each run's JSON report and output")
    parser.add_argument("--jsonl", help="also append each row as a JSON line to this file")
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()

    if args.list:
        for name, program in PROGRAMS.items():
            print(f"{name} | {program['repo']}/{program['cd']} | {' '.join(program['command'])}")
        return 0
    out = args.out or tempfile.mkdtemp(prefix="mldebug-public-out-")
    os.makedirs(out, exist_ok=True)
    mldebug = os.path.abspath(args.mldebug)
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    # One thread per process: the machines these run on are small and shared (torchrun sets the same).
    env.setdefault("OMP_NUM_THREADS", "1")

    runs = []
    if args.dir:
        if not args.command:
            parser.error("--dir needs a command after --")
        runs.append((os.path.basename(os.path.abspath(args.dir)),
                     {"cd": args.cd, "setup": [], "command": args.command},
                     os.path.abspath(args.dir)))
    else:
        checkouts = {}
        for item in args.checkout:
            repo, _, path = item.partition("=")
            checkouts[repo] = os.path.abspath(path)
        for name, program in PROGRAMS.items():
            if args.only and not any(o in name for o in args.only):
                continue
            runs.append((name, program, checkouts.get(program["repo"])))
        if not checkouts:
            parser.error("no checkout: give --checkout OWNER/NAME=PATH (see --list)")
    failed = False
    for name, program, checkout in runs:
        if args.steps is not None:
            program = dict(program, steps=args.steps)
        row = run_one(name, program, checkout, mldebug, out, env, args.timeout)
        print_row(row)
        if args.jsonl:
            with open(args.jsonl, "a") as f:
                f.write(json.dumps(row) + "\n")
        failed |= row.get("exit") == 1 or bool(row.get("probe_output"))
    print(f"reports and outputs: {out}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
