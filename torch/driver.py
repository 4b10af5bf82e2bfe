"""mldebug's PyTorch measurement driver: runs the checks on a PyTorch model and prints numbers.

The `mldebug` binary embeds this file, writes it out and runs it with the user's own Python:

    echo '{"contract": 2, "nonce": "n1", "target": {"kind": "file", "path": "/abs/model.py", "name": "Net"},
           "checks": ["init-loss"], "seed": 0, "steps": 200, "learning_rate": 0.003,
           "device": "cpu"}' | python driver.py

It prints JSON lines on stdout and nothing else:

    {"event": "started", "python": "3.11.7", "nonce": "n1"}
    {"event": "hello", "contract": 2, "python": "3.11.7", "torch": "2.15.0", ..., "nonce": "n1"}
    {"event": "check", "check": "init-loss", "measurement": {"samples": [...]}, "nonce": "n1"}
    {"event": "done", "nonce": "n1"}

What it is for: MEASURING (losses, gradient norms, frames of abs-min/abs-max/non-finite counts,
output changes, memory levels). What it is not for: judging. Every threshold, status and
sentence is decided in Rust (crate `judge`), the same code that judges candle models. The
request, the events, every measurement's fields and the model protocol are in CONTRACT.md
beside this file.

Needs only the standard library and torch (Python >= 3.9). transformers is imported only for
`hf:` targets, peft only for `--lora`, numpy only if the user's code already imported it.
Importable as a module without running anything (the benchmark imports `FrameRecorder`).
"""

import contextlib
import gc
import importlib.util
import json
import math
import os
import random
import sys
import time
import traceback
import weakref

# Start-up time is counted from here (before `import torch`).
START = time.perf_counter()

# Kineto (the profiler the memory check uses on CPU) logs its start and stop to stderr otherwise.
os.environ.setdefault("KINETO_LOG_LEVEL", "5")

# torch is imported by `import_torch`: by main() once it has said it started (so a Python
# without torch is told from a program that is not Python), at import for a module user.
torch = None
F = None

CONTRACT = 2
# What a start-up problem is (the `fatal` event's kind, CONTRACT.md), and the exit code each
# gives. The CLI reads the event, never the exit code: the user's code can exit with any code.
FATAL_EXIT = {
    "request": 2,  # the request itself is malformed
    "target": 3,  # the target cannot be loaded or does not follow the protocol
    "no_torch": 4,  # torch cannot be imported
    "user_code": 5,  # the user's code raised (or exited) while loading or building the model
}

CHECK_IDS = (
    "init-loss",
    "class-balance",
    "label-mask",
    "grad-flow",
    "nan-trace",
    "batch-leak",
    "overfit",
    "memory",
)
IGNORE_INDEX = -100
# init-loss: fresh inits (seeds seed+0..2), as the candle check.
INIT_LOSS_INITS = 3
# nan-trace: training steps traced, and frames reported before the culprit (a ring of 21).
NAN_TRACE_STEPS = 5
FRAMES_BEFORE = 20
# memory: training steps measured (step 2 against step 1, growth over steps 2 to 4).
MEMORY_STEPS = 4
# overfit: stop once the loss is at or below this share of its start, or (classification and
# LM) below this absolute cross-entropy. The verdict is Rust's; these only end the run early.
OVERFIT_PASS_RATIO = 0.05
OVERFIT_ABS_PASS = 0.05
# label-mask: std of the noise added to logits at masked positions (candle: PERTURBATION_SCALE).
PERTURBATION_SCALE = 10.0
# An error event carries at most this many traceback lines.
TRACEBACK_LINES = 12
# grad-flow with LoRA: at most this many distinct nn.Linear leaf names offered as targets.
LINEAR_NAMES_SHOWN = 12
# overfit: a progress event every this many steps.
PROGRESS_EVERY = 20
# hf: targets: the synthetic batch (rows x tokens), small enough for `check all` on a
# 5M-parameter GPT-2 to finish in seconds on two CPU cores, and the alphabet its tokens use.
HF_ROWS = 4
HF_TOKENS = 32
HF_ALPHABET = 48
# hf: rows after the first are right-padded by this many more tokens each.
HF_PAD_STEP = 4


class DriverError(Exception):
    """A start-up problem: a `fatal` event of `kind` (a key of FATAL_EXIT), its message on
    stderr, and the exit code of its kind."""

    def __init__(self, message, kind="target", traceback_lines=()):
        super().__init__(message)
        assert kind in FATAL_EXIT, kind
        self.kind = kind
        self.code = FATAL_EXIT[kind]
        self.traceback = list(traceback_lines)


def user_code_error(what, e):
    """The DriverError for an exception (or a sys.exit) the user's code raised in `what` at
    start-up: an error of the user's code, with the end of its traceback."""
    if isinstance(e, SystemExit):
        text = "%s called sys.exit(%r)" % (what, e.code)
    else:
        text = "%s raised %s: %s" % (what, type(e).__name__, first_line(e))
    lines = "".join(user_traceback(e)).splitlines()
    lines = [line for line in lines if line.strip()][-TRACEBACK_LINES:]
    return DriverError(text, "user_code", lines)


# ---------------------------------------------------------------------------------------------
# JSON output


def jsonable(x):
    """`x` with every non-finite float written as the strings "NaN", "inf", "-inf"."""
    if isinstance(x, float):
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return x
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    return x


class Events:
    """The JSON-lines channel: one object per line, flushed at once, each carrying the request's
    nonce (a line without it is not the driver's)."""

    def __init__(self, stream, nonce=None):
        self.stream = stream
        self.nonce = nonce

    def emit(self, obj):
        obj = dict(obj, nonce=self.nonce)
        self.stream.write(json.dumps(jsonable(obj), allow_nan=False) + "\n")
        self.stream.flush()


# ---------------------------------------------------------------------------------------------
# Tensors and the model protocol


def first_float_tensor(x):
    """The first floating-point tensor in a module output (a tensor, tuple, list or dict)."""
    if torch.is_tensor(x):
        return x if x.is_floating_point() else None
    if isinstance(x, dict):
        x = list(x.values())
    if isinstance(x, (list, tuple)):
        for v in x:
            t = first_float_tensor(v)
            if t is not None:
                return t
    return None


def logits_of(output):
    """The logits of a model output: `.logits` (HF ModelOutput), the first of a tuple, or itself."""
    logits = getattr(output, "logits", None)
    if torch.is_tensor(logits):
        return logits
    if isinstance(output, (list, tuple)) and output and torch.is_tensor(output[0]):
        return output[0]
    if torch.is_tensor(output):
        return output
    raise TypeError(
        "the model output is a %s: expected a tensor, a tuple starting with one, or an object with .logits"
        % type(output).__name__
    )


def with_logits(output, logits):
    """`output` with its logits replaced (for a loss that reads `.logits` or a tuple)."""
    if torch.is_tensor(output):
        return logits
    if torch.is_tensor(getattr(output, "logits", None)):
        import copy

        replaced = copy.copy(output)
        replaced.logits = logits
        return replaced
    if isinstance(output, tuple):
        return (logits,) + tuple(output[1:])
    if isinstance(output, list):
        return [logits] + list(output[1:])
    return logits


def to_device(x, device):
    if torch.is_tensor(x):
        return x.to(device)
    if isinstance(x, dict):
        return {k: to_device(v, device) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(to_device(v, device) for v in x)
    return x


def call(model, inputs):
    """`model(**inputs)` for a dict, `model(*inputs)` for a tuple, `model(inputs)` otherwise."""
    if isinstance(inputs, dict):
        return model(**inputs)
    if isinstance(inputs, (list, tuple)):
        return model(*inputs)
    return model(inputs)


def primary_input(inputs):
    """(key, tensor): the input the checks change and compare: `input_ids` of a dict, else the
    first tensor; key is None for a plain tensor."""
    if torch.is_tensor(inputs):
        return None, inputs
    if isinstance(inputs, dict):
        if torch.is_tensor(inputs.get("input_ids")):
            return "input_ids", inputs["input_ids"]
        for k, v in inputs.items():
            if torch.is_tensor(v):
                return k, v
    if isinstance(inputs, (list, tuple)):
        for i, v in enumerate(inputs):
            if torch.is_tensor(v):
                return i, v
    raise TypeError("batch() returned inputs with no tensor in them")


def replace_primary(inputs, key, tensor):
    if key is None:
        return tensor
    if isinstance(inputs, dict):
        out = dict(inputs)
        out[key] = tensor
        return out
    out = list(inputs)
    out[key] = tensor
    return type(inputs)(out)


def float_inputs(inputs):
    """(name, tensor) for every floating-point input: the `input` frames of nan-trace."""
    if torch.is_tensor(inputs):
        return [("input", inputs)] if inputs.is_floating_point() else []
    items = inputs.items() if isinstance(inputs, dict) else enumerate(inputs)
    return [
        ("input.%s" % k, v)
        for k, v in items
        if torch.is_tensor(v) and v.is_floating_point()
    ]


def default_loss(output, targets, task, labels):
    """The protocol's default loss: mean cross-entropy over the last dim with -100 ignored, 0 when
    every target is (the logits shifted by one first for labels "in_model"); mean squared error
    for regression."""
    logits = logits_of(output)
    if task == "regression":
        return F.mse_loss(logits.float(), targets.float().reshape(logits.shape))
    if labels == "in_model":
        logits = logits[..., :-1, :]
        targets = targets[..., 1:]
    flat = targets.reshape(-1).long()
    total = F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]).float(),
        flat,
        ignore_index=IGNORE_INDEX,
        reduction="sum",
    )
    # The mean over kept targets, and exactly 0 (with zero gradients) when every target is
    # ignored, as candle's masked cross-entropy: PyTorch's own mean gives 0/0 = NaN there.
    return total / (flat != IGNORE_INDEX).sum().clamp(min=1)


class Subject:
    """The model under test, normalised to the protocol: build, batch, loss, task, labels."""

    def __init__(self, label, task="classification", labels="shifted"):
        self.label = label
        self.task = task
        self.labels = labels
        self.lora = None  # the LoRA request, when there is one
        self.lora_info = None  # what wrapping found (grad-flow's `lora`)
        self.lora_failed = False

    def make(self):
        raise NotImplementedError

    def batch(self, seed, device):
        raise NotImplementedError

    def user_loss(self, output, targets):
        return None

    def build(self):
        """A fresh model, wrapped with LoRA when asked (and when peft accepted the targets).
        A Hugging Face causal LM shifts its labels itself: unless the protocol object says
        otherwise, its labels are "in_model", so label-mask judges labels shifted twice."""
        model = self.make()
        if not isinstance(model, torch.nn.Module):
            raise TypeError(
                "build() returned a %s, not a torch.nn.Module" % type(model).__name__
            )
        if not getattr(self, "labels_explicit", True) and shifts_labels_itself(model):
            self.labels = "in_model"
        if self.lora is not None and not self.lora_failed:
            model = wrap_lora(model, self.lora, self)
        return model

    def loss(self, output, targets):
        """The model's loss on `targets`: a one-element tensor, else a TypeError (an error of the
        user's code in every check that needs it, never a measurement)."""
        loss = self.user_loss(output, targets)
        if loss is None:
            return default_loss(output, targets, self.task, self.labels)
        if not torch.is_tensor(loss) or loss.numel() != 1:
            raise TypeError(
                "loss(output, targets) returned %s: expected a tensor with one element"
                % (
                    "a tensor of shape %s" % list(loss.shape)
                    if torch.is_tensor(loss)
                    else "a %s" % type(loss).__name__
                )
            )
        return loss


def shifts_labels_itself(model):
    """Whether `model` is a Hugging Face causal LM (or a peft wrapper of one): those shift the
    labels they are given by one position before their cross-entropy."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    cls = type(base)
    return cls.__module__.startswith("transformers.") and cls.__name__.endswith(
        ("ForCausalLM", "LMHeadModel")
    )


class FileSubject(Subject):
    """FILE.py:NAME: a class (instantiated with no arguments) or an object with build/batch."""

    def __init__(self, path, name):
        obj = load_protocol_object(path, name)
        task = getattr(obj, "task", "classification")
        labels = getattr(obj, "labels", "shifted")
        where = "%s:%s" % (path, name)
        if task not in ("classification", "causal_lm", "regression"):
            raise DriverError(
                "%s: task = %r, expected 'classification', 'causal_lm' or 'regression'"
                % (where, task)
            )
        if labels not in ("shifted", "in_model"):
            raise DriverError(
                "%s: labels = %r, expected 'shifted' or 'in_model'" % (where, labels)
            )
        super().__init__("%s:%s" % (os.path.basename(path), name), task, labels)
        self.labels_explicit = hasattr(obj, "labels")
        self.obj = obj
        loss = getattr(obj, "loss", None)
        self._loss = loss if callable(loss) else None

    def make(self):
        return self.obj.build()

    def batch(self, seed, device):
        got = self.obj.batch(seed, device)
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise TypeError(
                "batch(seed, device) must return (inputs, targets), got %s"
                % type(got).__name__
            )
        inputs, targets = got
        if not torch.is_tensor(targets):
            raise TypeError(
                "batch(): targets must be a tensor, got %s" % type(targets).__name__
            )
        return to_device(inputs, device), targets.to(device)

    def user_loss(self, output, targets):
        if self._loss is None:
            return None
        return self._loss(output, targets)


def load_protocol_object(path, name):
    """Imports FILE.py by path (its folder on sys.path) and returns NAME, instantiated if a class.
    A dotted NAME (`Models.Net`) is attribute access from the module: `getattr` part by part."""
    if not os.path.isfile(path):
        raise DriverError("%s: no such file" % path)
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.insert(0, folder)
    module_name = "mldebug_user_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise DriverError("%s: cannot be imported as a Python file" % path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as e:  # the user's file failed to import
        raise user_code_error("%s: importing the file" % path, e)
    obj, resolved = module, []
    for part in name.split("."):
        if not hasattr(obj, part):
            where = "`%s`" % ".".join(resolved) if resolved else "the file"
            raise DriverError(
                "%s: no `%s` in %s%s" % (path, part, where, defined_hint(obj, module_name))
            )
        obj = getattr(obj, part)
        resolved.append(part)
    if isinstance(obj, type):
        try:
            obj = obj()
        except (Exception, SystemExit) as e:
            raise user_code_error("%s:%s: %s() with no arguments" % (path, name, name), e)
    missing = [m for m in ("build", "batch") if not callable(getattr(obj, m, None))]
    if missing:
        raise DriverError(
            "%s:%s does not follow the protocol: no %s method (needs build(self) -> nn.Module "
            "and batch(self, seed, device) -> (inputs, targets))"
            % (path, name, " or ".join("`%s`" % m for m in missing))
        )
    return obj


def defined_hint(obj, module_name):
    """" (it defines: A, B)": the classes and protocol objects defined in a module or class."""
    defined = sorted(
        k for k, v in vars(obj).items()
        if not k.startswith("_") and (isinstance(v, type) or hasattr(v, "build"))
        and getattr(v, "__module__", module_name) == module_name
    )
    return " (it defines: %s)" % ", ".join(defined[:8]) if defined else ""


class HfSubject(Subject):
    """hf:DIR_OR_CONFIG_JSON: AutoModelForCausalLM.from_config with random weights, offline, and
    a synthetic batch with learnable structure (rows of arithmetic token sequences, right-padded,
    with an attention mask; labels = input_ids with padding set to -100, the HF convention)."""

    def __init__(self, path):
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        try:
            import transformers  # noqa: F401
            from transformers import AutoConfig
        except ImportError:
            raise DriverError(
                "hf:%s needs the transformers package in this Python (%s): pip install transformers"
                % (path, sys.executable)
            )
        if not os.path.exists(path):
            raise DriverError("hf:%s: no such file or directory" % path)
        try:
            self.config = AutoConfig.from_pretrained(path)
        except Exception as e:
            raise DriverError(
                "hf:%s: not a readable transformers config: %s" % (path, first_line(e))
            )
        super().__init__("hf:%s" % path, "causal_lm", "in_model")

    def make(self):
        from transformers import AutoModelForCausalLM

        return AutoModelForCausalLM.from_config(self.config)

    def batch(self, seed, device):
        vocab = int(self.config.vocab_size)
        positions = getattr(self.config, "max_position_embeddings", None) or getattr(
            self.config, "n_positions", None
        )
        tokens = min(HF_TOKENS, int(positions)) if positions else HF_TOKENS
        pad = getattr(self.config, "pad_token_id", None)
        if pad is None:
            pad = 0
        alphabet = max(2, min(HF_ALPHABET, vocab - 1))
        g = torch.Generator().manual_seed(int(seed))
        starts = torch.randint(0, alphabet, (HF_ROWS, 1), generator=g)
        strides = torch.randint(1, 4, (HF_ROWS, 1), generator=g)
        ids = (starts + strides * torch.arange(tokens)) % alphabet
        # Content tokens never equal the pad id.
        ids = torch.where(ids >= pad, ids + 1, ids) % vocab
        mask = torch.ones(HF_ROWS, tokens, dtype=torch.long)
        for r in range(1, HF_ROWS):
            keep = max(2, tokens - HF_PAD_STEP * r)
            ids[r, keep:] = pad
            mask[r, keep:] = 0
        labels = ids.masked_fill(mask == 0, IGNORE_INDEX)
        inputs = {"input_ids": ids.to(device), "attention_mask": mask.to(device)}
        return inputs, labels.to(device)


# ---------------------------------------------------------------------------------------------
# LoRA


def leaf_name(name):
    return name.rsplit(".", 1)[-1]


def linear_module_names(model):
    """Distinct leaf names of the model's linear layers (nn.Linear, and transformers' Conv1D,
    which peft also wraps), in model order: the names `--lora targets=` can use."""
    seen = []
    for name, module in model.named_modules():
        kind = type(module).__name__
        if isinstance(module, torch.nn.Linear) or kind == "Conv1D":
            short = leaf_name(name)
            if short and short not in seen:
                seen.append(short)
    return seen[:LINEAR_NAMES_SHOWN]


def wrap_lora(model, lora, subject):
    """peft's get_peft_model(LoraConfig(...)); when peft refuses the targets, the model unwrapped,
    with the refusal kept for grad-flow (`lora.error`)."""
    try:
        import peft
    except ImportError:
        raise DriverError(
            "--lora needs the peft package in this Python (%s): pip install peft"
            % sys.executable
        )
    config = peft.LoraConfig(
        r=int(lora["r"]),
        lora_alpha=lora["alpha"],
        target_modules=list(lora["targets"]),
        lora_dropout=float(lora.get("dropout", 0.0) or 0.0),
    )
    linear = linear_module_names(model)
    try:
        wrapped = peft.get_peft_model(model, config)
    except ValueError as e:
        subject.lora_failed = True
        subject.lora_info = {
            "targets": list(lora["targets"]),
            "matched_modules": [],
            "adapter_params": [],
            "error": first_line(e),
            "linear_modules": linear,
        }
        return model
    prefix = "base_model.model."
    matched = [
        n[len(prefix):] if n.startswith(prefix) else n
        for n, m in wrapped.named_modules()
        if hasattr(m, "lora_A") and isinstance(getattr(m, "lora_A"), torch.nn.ModuleDict)
    ]
    adapters = [n for n, p in wrapped.named_parameters() if p.requires_grad and "lora_" in n]
    subject.lora_info = {
        "targets": list(lora["targets"]),
        "matched_modules": matched,
        "adapter_params": adapters,
        "error": None,
        "linear_modules": linear,
    }
    return wrapped


# ---------------------------------------------------------------------------------------------
# Seeds and RNG states


def seed_all(seed):
    random.seed(seed)
    np = sys.modules.get("numpy")
    if np is not None:
        np.random.seed(seed % (2**32))
    torch.manual_seed(seed)


def rng_state():
    state = {"python": random.getstate(), "torch": torch.get_rng_state()}
    np = sys.modules.get("numpy")
    if np is not None:
        state["numpy"] = np.random.get_state()
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state):
    random.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    np = sys.modules.get("numpy")
    if np is not None and "numpy" in state:
        np.random.set_state(state["numpy"])
    if "cuda" in state:
        torch.cuda.set_rng_state_all(state["cuda"])


def first_line(e):
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


# ---------------------------------------------------------------------------------------------
# The frame recorder (nan-trace)


def stat2(t):
    """[abs-min, abs-max] of `t` as one device tensor (no host sync). A NaN propagates to both
    and an infinity to abs-max, so abs-max is finite exactly when every element is: the
    non-finite count is computed only for the rows that need it, after the read-back.
    (aminmax of |x| is 7x cheaper on CPU than vector_norm with ord +-inf, and than counting
    isfinite on every output.)"""
    return torch.stack(torch.aminmax(t.detach().abs()))


def non_finite_count(t):
    return int((~torch.isfinite(t.detach())).sum())


class FrameRecorder:
    """Forward hooks on every leaf module writing each output's abs-min, abs-max and finite count
    into device tensors, read back once per step (`flush`): no `.item()` or host sync inside the
    step. Frames come in execution order; `flush` returns them as contract FRAMEs.

    Usage (the benchmark uses it the same way):

        rec = FrameRecorder(model)
        out = model(x); rec.record("output", "output", out); frames = rec.flush()
        rec.remove()
    """

    def __init__(self, model):
        self.meta = []  # (module, kind, shape) per frame of this step
        self.rows = []  # device tensors [2] per frame of this step
        self.tensors = []  # the recorded tensors, until flush (to count a non-finite row)
        self.handles = []
        self.traced = 0
        self.last = None  # the tensor of the last row, not kept past flush()
        for name, module in model.named_modules():
            if next(module.children(), None) is not None:
                continue
            hook = self._hook(name or "model", type(module).__name__)
            self.handles.append(module.register_forward_hook(hook))
            self.traced += 1

    def _hook(self, name, kind):
        def hook(module, args, output):
            t = first_float_tensor(output)
            if t is not None:
                self.record(name, kind, t)

        return hook

    def record(self, module, kind, t):
        if t.numel() == 0:
            return
        self.meta.append((module, kind, list(t.shape)))
        self.tensors.append(t)
        # The model output is usually the last layer's output itself: its row is reused.
        if self.rows and t is self.last:
            self.rows.append(self.rows[-1])
            return
        self.last = t
        self.rows.append(stat2(t))

    def flush(self):
        """The frames recorded since the last flush, read back in one transfer."""
        meta, rows, tensors = self.meta, self.rows, self.tensors
        self.meta, self.rows, self.tensors, self.last = [], [], [], None
        if not rows:
            return []
        values = torch.stack(rows).double().cpu().tolist()
        return [
            {
                "module": module,
                "kind": kind,
                "shape": shape,
                "abs_min": v[0],
                "abs_max": v[1],
                "non_finite": 0 if math.isfinite(v[1]) else non_finite_count(t),
            }
            for (module, kind, shape), v, t in zip(meta, values, tensors)
        ]

    def remove(self):
        for h in self.handles:
            h.remove()
        self.handles = []


def scan(named, what, buffers=()):
    """The first (name, frame) whose tensor holds a NaN or an infinity, in the order given; one
    read-back for all of them."""
    named = [(n, t) for n, t in named if t is not None and t.is_floating_point() and t.numel()]
    if not named:
        return None
    values = torch.stack([stat2(t) for _, t in named]).double().cpu().tolist()
    for (name, t), v in zip(named, values):
        non_finite = 0 if math.isfinite(v[1]) else non_finite_count(t)
        if non_finite:
            kind = "buffer" if name in buffers else what
            label = "%s of %s" % (kind, name)
            frame = {
                "module": label,
                "kind": kind,
                "shape": list(t.shape),
                "abs_min": v[0],
                "abs_max": v[1],
                "non_finite": non_finite,
            }
            return label, frame
    return None


# ---------------------------------------------------------------------------------------------
# The checks: each returns ("measurement", dict) or ("skipped", reason)


class Run:
    """What the checks share: the subject, the request's settings and the event channel."""

    def __init__(self, subject, request, events):
        self.subject = subject
        self.seed = int(request.get("seed", 0))
        self.steps = max(1, int(request.get("steps", 200)))
        self.learning_rate = float(request.get("learning_rate", 0.003))
        self.device = torch.device(request.get("device", "cpu"))
        self.events = events
        # (model, state, training) when build() hands out one model it keeps (see `start`).
        self.shared = None

    def fresh(self, seed):
        """A fresh model (torch seeded first) and its batch, on the device."""
        seed_all(seed)
        model = self.subject.build()
        model.to(self.device)
        inputs, targets = self.subject.batch(seed, self.device)
        return model, inputs, targets

    def restore_models(self):
        """A build() that hands out one shared model gets it back as it was at start-up."""
        if self.shared is None:
            return
        model, state, training = self.shared
        model.load_state_dict(state)
        model.train(training)
        for p in model.parameters():
            p.grad = None

    def progress(self, check, done, total, loss=None):
        event = {"event": "progress", "check": check, "done": done, "total": total}
        if loss is not None:
            event["loss"] = loss
        self.events.emit(event)


def check_init_loss(run):
    samples = []
    for k in range(INIT_LOSS_INITS):
        model, inputs, targets = run.fresh(run.seed + k)
        model.train()
        with torch.no_grad():
            output = call(model, inputs)
            loss = run.subject.loss(output, targets)
            logits = logits_of(output).float()
        samples.append(
            {
                "loss": float(loss.float()),
                "classes": int(logits.shape[-1]) if logits.dim() else 1,
                "logit_std": float(logits.std(unbiased=False)) if logits.numel() else 0.0,
            }
        )
    return "measurement", {"samples": samples}


def check_class_balance(run):
    seed_all(run.seed)
    _, targets = run.subject.batch(run.seed, run.device)
    if targets.is_floating_point():
        return "measurement", {"targets_float": True, "targets": []}
    return "measurement", {
        "targets_float": False,
        "targets": targets.reshape(-1).long().cpu().tolist(),
    }


def grads_move(loss, params):
    """Some parameter gets a finite, non-zero gradient from `loss`."""
    if not loss.requires_grad or not params:
        return False
    grads = torch.autograd.grad(loss, params, allow_unused=True)
    for g in grads:
        if g is None:
            continue
        if bool(torch.isfinite(g).all()) and bool((g != 0).any()):
            return True
    return False


def probe_masks(targets, in_model):
    """(targets with the probe's positions set to -100, the mask of logits to perturb): the
    batch's own -100 positions, or every other position when it masks none or all."""
    flat = targets.reshape(-1)
    masked = flat == IGNORE_INDEX
    if bool(masked.any()) and bool((~masked).any()):
        rows = masked
    else:
        rows = torch.arange(flat.numel(), device=flat.device) % 2 == 1
    probe = torch.where(rows, torch.full_like(flat, IGNORE_INDEX), flat).reshape(targets.shape)
    rows = rows.reshape(targets.shape)
    if in_model and targets.dim() >= 1:
        # The logit at t is scored against label t + 1.
        shifted = torch.zeros_like(rows)
        shifted[..., :-1] = rows[..., 1:]
        rows = shifted
    return probe, rows


def masked_logits_probe(run, output, targets):
    """Loss before and after N(0, 10) noise on the logits whose targets the probe masks."""
    logits = logits_of(output).detach()
    classes = logits.shape[-1] if logits.dim() else 1
    if targets.is_floating_point() or targets.numel() < 2:
        return None
    if logits.numel() != targets.numel() * classes:
        return None
    probe, rows = probe_masks(targets, run.subject.labels == "in_model")
    g = torch.Generator().manual_seed(run.seed)
    noise = torch.randn(tuple(logits.shape), generator=g) * PERTURBATION_SCALE
    mask = rows.reshape(-1, 1).to(torch.float32).cpu()
    delta = (noise.reshape(-1, classes) * mask).reshape(logits.shape)
    delta = delta.to(device=logits.device, dtype=logits.dtype)
    if not bool((delta != 0).any()):
        return None
    try:
        with torch.no_grad():
            before = run.subject.loss(with_logits(output, logits), probe)
            after = run.subject.loss(with_logits(output, logits + delta), probe)
        return {"before": float(before.float()), "after": float(after.float())}
    except Exception:
        return None


def check_label_mask(run):
    model, inputs, targets = run.fresh(run.seed)
    if targets.is_floating_point():
        return "skipped", "the targets are floats (values, not class ids): there is no -100 mask"
    model.eval()
    _, primary = primary_input(inputs)
    same = (
        not primary.is_floating_point()
        and tuple(primary.shape) == tuple(targets.shape)
    )
    measurement = {
        "targets": targets.reshape(-1).long().cpu().tolist(),
        "inputs": primary.reshape(-1).long().cpu().tolist() if same else None,
        "seq_len": int(targets.shape[-1]) if targets.dim() >= 2 else None,
    }
    output = call(model, inputs)
    params = [p for p in model.parameters() if p.requires_grad]
    logits = logits_of(output)
    classes = int(logits.shape[-1]) if logits.dim() else 1
    measurement["classes"] = classes
    ignored = targets == IGNORE_INDEX
    kept = targets[~ignored]
    in_range = bool(((kept >= 0) & (kept < classes)).all())
    # The loss first on the batch's targets with every -100 made class 0: if it raises on class
    # ids alone, the user's loss (not the mask) is broken, and the check is an error, not a
    # verdict on the mask. A loss that raises only on -100 is the all-masked probe's finding;
    # targets outside [0, classes) are the labels' own fault: Rust fails both.
    try:
        run.subject.loss(output, torch.where(ignored, torch.zeros_like(targets), targets))
    except Exception:
        if in_range:
            raise
    try:
        loss = run.subject.loss(output, torch.full_like(targets, IGNORE_INDEX))
        measurement["all_masked"] = {
            "loss": float(loss.detach().float()),
            "grads_move": grads_move(loss, params),
        }
    except Exception as e:
        measurement["all_masked"] = {"error": "%s: %s" % (type(e).__name__, first_line(e))}
    measurement["masked_logits"] = masked_logits_probe(run, output, targets)
    return "measurement", measurement


def graph_depths(loss):
    """{id(parameter): rank}: parameters in the loss's autograd graph in topological order from
    the loss, 0 = closest to it. Kahn's order: a node comes once every node reading its output
    has come, first come first served; so the head's weight ranks first and an embedding read
    through the whole residual stream ranks after every block (a breadth-first distance would
    put it beside the head, through the residual shortcut)."""
    root = loss.grad_fn
    if root is None:
        return {}

    def inputs(node):
        return [c for c, _ in getattr(node, "next_functions", ()) if c is not None]

    readers, stack = {root: 0}, [root]
    while stack:
        node = stack.pop()
        for child in inputs(node):
            if child not in readers:
                readers[child] = 0
                stack.append(child)
            readers[child] += 1
    depths, queue, k = {}, [root], 0
    while k < len(queue):
        node = queue[k]
        k += 1
        var = getattr(node, "variable", None)
        if var is not None and id(var) not in depths:
            depths[id(var)] = len(depths)
        for child in inputs(node):
            readers[child] -= 1
            if readers[child] == 0:
                queue.append(child)
    return depths


def grad_row(name, p, order, depths):
    g = p.grad
    if g is None:
        grad = {"kind": "none"}
    else:
        non_finite = int((~torch.isfinite(g)).sum())
        if non_finite:
            grad = {"kind": "non_finite", "count": non_finite}
        elif not bool((g != 0).any()):
            grad = {"kind": "zero"}
        else:
            grad = {"kind": "norm", "norm": float(g.double().norm())}
    return {
        "name": name,
        "shape": list(p.shape),
        "param_norm": float(p.detach().double().norm()),
        "grad": grad,
        "depth": depths.get(id(p)),
        "order": order,
    }


def check_grad_flow(run):
    model, inputs, targets = run.fresh(run.seed)
    model.train()
    output = call(model, inputs)
    loss = run.subject.loss(output, targets)
    connected = bool(loss.requires_grad) and loss.grad_fn is not None
    depths = graph_depths(loss) if connected else {}
    if connected:
        loss.backward()
    params, frozen = [], []
    for order, (name, p) in enumerate(model.named_parameters()):
        if p.requires_grad:
            params.append(grad_row(name, p, order, depths))
        elif p.is_floating_point():
            frozen.append({"name": name, "shape": list(p.shape)})
    buffers = [{"name": n, "shape": list(b.shape)} for n, b in model.named_buffers()]
    return "measurement", {
        "loss_requires_grad": connected,
        "params": params,
        "frozen": frozen,
        "buffers": buffers,
        "lora": run.subject.lora_info,
    }


def model_dtype(model):
    for p in model.parameters():
        if p.is_floating_point():
            return p.dtype
    return torch.get_default_dtype()


def check_nan_trace(run):
    model, inputs, targets = run.fresh(run.seed)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=run.learning_rate) if params else None
    named_params = list(model.named_parameters())
    named_buffers = list(model.named_buffers())
    buffer_names = {n for n, _ in named_buffers}
    recorder = FrameRecorder(model)
    culprit, max_abs = None, 0.0
    try:
        for step in range(NAN_TRACE_STEPS):
            for name, t in float_inputs(inputs):
                recorder.record(name, "input", t)
            output = call(model, inputs)
            recorder.record("output", "output", logits_of(output))
            loss = run.subject.loss(output, targets)
            recorder.record("loss", "loss", loss)
            frames = recorder.flush()
            finite_max = [f["abs_max"] for f in frames if math.isfinite(f["abs_max"])]
            max_abs = max([max_abs] + finite_max)
            bad = next((i for i, f in enumerate(frames) if f["non_finite"]), None)
            if bad is not None:
                culprit = {
                    "step": step,
                    "frame": frames[bad],
                    "before": frames[max(0, bad - FRAMES_BEFORE):bad],
                    "scanned": None,
                }
                break
            if optimizer is None or not loss.requires_grad:
                run.progress("nan-trace", step + 1, NAN_TRACE_STEPS, float(loss.detach().float()))
                continue
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            found = scan([(n, p.grad) for n, p in named_params], "gradient")
            if found is None:
                optimizer.step()
                found = scan(
                    [(n, p.detach()) for n, p in named_params] + named_buffers,
                    "parameter",
                    buffer_names,
                )
            if found is not None:
                label, frame = found
                culprit = {
                    "step": step,
                    "frame": frame,
                    "before": frames[-FRAMES_BEFORE:],
                    "scanned": label,
                }
                break
            run.progress("nan-trace", step + 1, NAN_TRACE_STEPS, float(loss.detach().float()))
    finally:
        recorder.remove()
    dtype = model_dtype(model)
    return "measurement", {
        "steps": NAN_TRACE_STEPS,
        "culprit": culprit,
        "max_abs": max_abs,
        "traced_modules": recorder.traced,
        "dtype": str(dtype).replace("torch.", ""),
        "dtype_max": float(torch.finfo(dtype).max),
    }


def moved(a, b):
    """Largest |a - b|: a side turning NaN or infinite counts as inf, NaN == NaN as 0."""
    if a.numel() == 0:
        return 0.0
    a, b = a.double(), b.double()
    d = (a - b).abs()
    both_nan = a.isnan() & b.isnan()
    same = a == b
    undefined = d.isnan()
    d = torch.where(undefined & ~(same | both_nan), torch.full_like(d, math.inf), d)
    d = torch.where(undefined & (same | both_nan), torch.zeros_like(d), d)
    return float(d.max())


def changed(x, rows, start, modulus, seed):
    """`x` with rows `rows` (and within them positions `start..` along dim 1, or all) changed:
    ids + 1 modulo `modulus`, floats by seeded noise of the input's own RMS."""
    y = x.clone()
    if y.dim() >= 2 and start is not None:
        region = (rows, slice(start, None))
    else:
        region = (rows,)
    if x.is_floating_point():
        scale = max(float(x.double().pow(2).mean().sqrt()), 1e-3)
        g = torch.Generator().manual_seed(seed)
        part = y[region]
        noise = torch.randn(tuple(part.shape), generator=g, dtype=torch.float64) * scale
        y[region] = (part.double().cpu() + noise).to(dtype=x.dtype, device=x.device)
    else:
        y[region] = (y[region] + 1).remainder(modulus)
    return y


def check_batch_leak(run):
    model, inputs, targets = run.fresh(run.seed)
    model.eval()
    key, x = primary_input(inputs)
    n = int(x.shape[0]) if x.dim() else 0
    with torch.no_grad():
        base = logits_of(call(model, inputs)).float()
        measurement = {
            "batch": n,
            "output_shape": list(base.shape),
            "output_finite": bool(torch.isfinite(base).all()),
            "ids_all_zero": False,
            "own": 0.0,
            "cross": 0.0,
            "scale": 0.0,
            "future": None,
        }
        if n < 2 or base.dim() == 0 or base.shape[0] != n or not measurement["output_finite"]:
            return "measurement", measurement
        causal = run.subject.task == "causal_lm" and x.dim() >= 2 and not x.is_floating_point()
        modulus = 1
        if not x.is_floating_point():
            modulus = int(base.shape[-1]) if causal else int(x.max()) + 1
            if modulus < 2:
                measurement["ids_all_zero"] = True
                return "measurement", measurement
        j = n - 1
        other = call(model, replace_primary(inputs, key, changed(x, [j], None, modulus, run.seed)))
        other = logits_of(other).float()
        measurement["own"] = moved(base[j], other[j])
        measurement["cross"] = moved(base[:j], other[:j])
        measurement["scale"] = float(base[j].abs().max())
        if causal:
            steps = int(x.shape[1])
            if steps >= 2 and base.dim() >= 3 and base.shape[1] == steps:
                t = steps // 2 - 1
                rows = list(range(n))
                later = call(
                    model,
                    replace_primary(inputs, key, changed(x, rows, t + 1, modulus, run.seed)),
                )
                later = logits_of(later).float()
                measurement["future"] = {
                    "t": t,
                    "past": moved(base[:, : t + 1], later[:, : t + 1]),
                    "ahead": moved(base[:, t + 1:], later[:, t + 1:]),
                }
    return "measurement", measurement


def mean_ce(run, output, targets):
    """Mean cross-entropy of the outputs (classification and LM), whatever loss the model uses."""
    if run.subject.task == "regression":
        return None
    try:
        with torch.no_grad():
            return float(default_loss(output, targets, "classification", run.subject.labels))
    except Exception:
        return None


def check_overfit(run):
    model, inputs, targets = run.fresh(run.seed)
    model.train()
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad and p.is_floating_point()]
    params = [p for _, p in named]
    weights = [(n, p) for n, p in named if p.dim() >= 2]
    before = [p.detach().clone() for _, p in weights]
    optimizer = torch.optim.Adam(params, lr=run.learning_rate) if params else None
    losses, updates, start_ce, end_ce = [], [], None, None
    total = run.steps
    for step in range(total + 1):
        output = call(model, inputs)
        loss = run.subject.loss(output, targets)
        value = float(loss.detach().float())
        losses.append(value)
        ce = mean_ce(run, output, targets)
        if step == 0:
            start_ce = ce
        end_ce = ce
        if step % PROGRESS_EVERY == 0:
            run.progress("overfit", step, total, value)
        first = losses[0]
        memorised = value <= OVERFIT_PASS_RATIO * first or (
            run.subject.task != "regression" and 0.0 <= value < OVERFIT_ABS_PASS
        )
        if (
            not math.isfinite(value)
            or step == total
            or (first > 0 and memorised)
            or first == 0
            or optimizer is None
            or not loss.requires_grad
        ):
            break
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step == 0:
            for (name, p), w0 in zip(weights, before):
                norm = float(w0.double().norm())
                if norm > 0:
                    updates.append([name, float((p.detach() - w0).double().norm()) / norm])
            updates.sort(key=lambda u: u[1])
            before = None
    return "measurement", {
        "losses": losses,
        "updates": updates,
        "start_ce": start_ce,
        "end_ce": end_ce,
        "trainable": len(params),
        # Only LoRA adapters train: the wrap succeeded (a failed wrap trains the whole model).
        "adapters_only": run.subject.lora is not None and not run.subject.lora_failed,
    }


def module_outputs(model, inputs):
    """Bytes of each leaf module's output in one forward pass (no gradients kept)."""
    rows, handles = [], []
    for name, module in model.named_modules():
        if next(module.children(), None) is not None:
            continue

        def hook(mod, args, output, name=name, kind=type(module).__name__):
            t = first_float_tensor(output)
            if t is not None:
                rows.append(
                    {"module": name or "model", "kind": kind,
                     "bytes": float(t.numel() * t.element_size())}
                )

        handles.append(module.register_forward_hook(hook))
    try:
        with torch.no_grad():
            call(model, inputs)
    finally:
        for h in handles:
            h.remove()
    return rows


class CpuMemoryTimeline:
    """Tensor storages over a few training steps, from the profiler's memory events
    (profile_memory=True): every storage the CPU allocator hands out or takes back,
    timestamped, between named marks."""

    def __init__(self):
        from torch.profiler import ProfilerActivity, profile

        self.profile = profile(activities=[ProfilerActivity.CPU], profile_memory=True)

    def __enter__(self):
        self.profile.__enter__()
        return self

    def __exit__(self, *exc):
        return self.profile.__exit__(*exc)

    def mark(self, name):
        """A moment: a zero-length profiler range (its start is the moment)."""
        from torch.profiler import record_function

        with record_function("mldebug:" + name):
            pass

    def read(self):
        """The Levels of the run."""
        events = self.profile.profiler.kineto_results.events()
        mem, marks = [], {}
        for e in events:
            name = e.name()
            if name == "[memory]":
                if str(e.device_type()).endswith("CPU"):
                    mem.append((e.start_ns(), e.nbytes()))
            elif name.startswith("mldebug:"):
                marks[name[len("mldebug:"):]] = e.start_ns()
        mem.sort()
        return Levels(mem, marks)


class Levels:
    """Level at a moment, peak and largest allocation between two moments."""

    def __init__(self, events, marks):
        self.times = [t for t, _ in events]
        self.sizes = [b for _, b in events]
        self.levels = []
        level = 0
        for b in self.sizes:
            level += b
            self.levels.append(level)
        self.marks = marks

    def _index(self, mark):
        import bisect

        return bisect.bisect_left(self.times, self.marks[mark])

    def at(self, mark):
        i = self._index(mark)
        return float(self.levels[i - 1]) if i > 0 else 0.0

    def peak(self, start, end):
        i, k = self._index(start), self._index(end)
        return float(max([self.at(start)] + self.levels[i:k]))

    def largest(self, start, end):
        i, k = self._index(start), self._index(end)
        return float(max([0] + [b for b in self.sizes[i:k] if b > 0]))


def train_steps(run, mark):
    """Fresh model, its batch and MEMORY_STEPS Adam steps, calling `mark(name)` at each stage
    boundary. Returns (model, inputs, optimizer)."""
    mark("start")
    seed_all(run.seed)
    model = run.subject.build().to(run.device)
    model.train()
    mark("built")
    inputs, targets = run.subject.batch(run.seed, run.device)
    mark("data")
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = None
    for step in range(MEMORY_STEPS):
        s = str(step)
        mark(s + ":forward")
        output = call(model, inputs)
        loss = run.subject.loss(output, targets)
        mark(s + ":backward")
        loss.backward()
        mark(s + ":backward_end")
        del output, loss
        mark(s + ":optimizer")
        if optimizer is None and params:
            optimizer = torch.optim.Adam(params, lr=run.learning_rate)
        if optimizer is not None:
            optimizer.step()
        mark(s + ":optimizer_end")
        if optimizer is not None:
            optimizer.zero_grad(set_to_none=True)
        mark(s + ":end")
    return model, inputs, optimizer


def check_memory(run):
    """MEMORY_STEPS Adam steps under the profiler's memory events: every tensor storage the
    allocator hands out or takes back, so a clean step ends at exactly the bytes it started with
    and anything kept from one step into the next shows."""
    if run.device.type == "cuda":
        return "measurement", memory_cuda(run)
    timeline = CpuMemoryTimeline()
    with timeline:
        model, inputs, optimizer = train_steps(run, timeline.mark)
    levels = timeline.read()
    base = levels.at("start")
    steps = []
    for step in range(MEMORY_STEPS):
        s = str(step)
        steps.append(
            {
                "forward": levels.peak(s + ":forward", s + ":backward") - base,
                "forward_end": levels.at(s + ":backward") - base,
                "backward": levels.peak(s + ":backward", s + ":backward_end") - base,
                "after_backward": levels.at(s + ":optimizer") - base,
                "optimizer_step": levels.peak(s + ":optimizer", s + ":optimizer_end") - base,
                "end": levels.at(s + ":end") - base,
                "forward_largest": levels.largest(s + ":forward", s + ":backward"),
            }
        )
    state = 0.0
    if optimizer is not None:
        state = float(sum(
            t.numel() * t.element_size()
            for per_param in optimizer.state.values()
            for t in per_param.values()
            if torch.is_tensor(t)
        ))
    source = ("CPU, this process: bytes of live tensor storages as the CPU allocator hands "
              "them out and takes them back (PyTorch profiler memory events, profile_memory=True); "
              "autograd graph nodes, tensor headers and Python objects are not counted")
    return "measurement", {
        "source": source,
        "load": levels.at("built") - base,
        "data": levels.at("data") - levels.at("built"),
        "optimizer_state": state,
        "steps": steps,
        "modules": module_outputs(model, inputs),
    }


def memory_cuda(run):
    """The same stages from the CUDA caching allocator's own counters."""
    cuda = torch.cuda
    device = run.device
    cuda.synchronize(device)
    gc.collect()
    base = cuda.memory_allocated(device)

    def level():
        cuda.synchronize(device)
        return float(cuda.memory_allocated(device) - base)

    def peak():
        cuda.synchronize(device)
        return float(cuda.max_memory_allocated(device) - base)

    seed_all(run.seed)
    model = run.subject.build().to(device)
    model.train()
    load = level()
    inputs, targets = run.subject.batch(run.seed, device)
    data = level() - load
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer, state, steps = None, 0.0, []
    for _ in range(MEMORY_STEPS):
        row = {}
        cuda.reset_peak_memory_stats(device)
        before = cuda.max_memory_allocated(device)
        output = call(model, inputs)
        loss = run.subject.loss(output, targets)
        row["forward"] = peak()
        row["forward_end"] = level()
        # No per-allocation events here: the peak's rise above the level before forward.
        row["forward_largest"] = float(cuda.max_memory_allocated(device) - before)
        cuda.reset_peak_memory_stats(device)
        loss.backward()
        row["backward"] = peak()
        del output, loss
        gc.collect()
        row["after_backward"] = level()
        cuda.reset_peak_memory_stats(device)
        if optimizer is None and params:
            optimizer = torch.optim.Adam(params, lr=run.learning_rate)
            before_state = level()
            optimizer.step()
            state = level() - before_state
        elif optimizer is not None:
            optimizer.step()
        row["optimizer_step"] = peak()
        if optimizer is not None:
            optimizer.zero_grad(set_to_none=True)
        gc.collect()
        row["end"] = level()
        steps.append(row)
    return {
        "source": "torch.cuda allocator: memory_allocated and max_memory_allocated with "
        "reset_peak_memory_stats around each stage, %s" % device,
        "load": load,
        "data": data,
        "optimizer_state": state,
        "steps": steps,
        "modules": module_outputs(model, inputs),
    }


CHECKS = {
    "init-loss": check_init_loss,
    "class-balance": check_class_balance,
    "label-mask": check_label_mask,
    "grad-flow": check_grad_flow,
    "nan-trace": check_nan_trace,
    "batch-leak": check_batch_leak,
    "overfit": check_overfit,
    "memory": check_memory,
}


def user_traceback(e):
    """The traceback without the driver's own frames and torch's module-call wrappers: what is
    left points into the user's code (all frames when nothing is left)."""
    own = {"<string>", os.path.abspath(globals().get("__file__", "<string>"))}
    wrapper = os.path.join("torch", "nn", "modules", "module.py")
    frames = traceback.extract_tb(e.__traceback__)
    kept = [f for f in frames if f.filename not in own and not f.filename.endswith(wrapper)]
    return traceback.format_list(kept or frames) + traceback.format_exception_only(type(e), e)


def error_event(check, e):
    lines = "".join(user_traceback(e)).splitlines()
    lines = [line for line in lines if line.strip()][-TRACEBACK_LINES:]
    return {
        "event": "check",
        "check": check,
        "error": {"message": "%s: %s" % (type(e).__name__, first_line(e)), "traceback": lines},
    }


def run_check(run, check):
    """One check's event; every RNG and any model build() handed out are put back afterwards."""
    state = rng_state()
    grad_enabled = torch.is_grad_enabled()
    try:
        kind, value = CHECKS[check](run)
        return {"event": "check", "check": check, kind: value}
    except DriverError:
        raise
    except (Exception, SystemExit) as e:  # the user's code raised, or called sys.exit
        return error_event(check, e)
    finally:
        torch.set_grad_enabled(grad_enabled)
        try:
            run.restore_models()
        finally:
            set_rng_state(state)


# ---------------------------------------------------------------------------------------------
# Request, start-up and main


def parse_request(text):
    try:
        request = json.loads(text)
    except ValueError as e:
        raise DriverError("the request on stdin is not JSON: %s" % e, "request")
    if not isinstance(request, dict):
        raise DriverError("the request on stdin must be a JSON object", "request")
    if request.get("contract") != CONTRACT:
        raise DriverError(
            "the request asks for contract %r; this driver speaks contract %d"
            % (request.get("contract"), CONTRACT),
            "request",
        )
    target = request.get("target")
    if not isinstance(target, dict) or target.get("kind") not in ("file", "hf"):
        raise DriverError(
            'the request needs "target": {"kind": "file" | "hf", ...}', "request"
        )
    if target["kind"] == "file" and not (target.get("path") and target.get("name")):
        raise DriverError('a file target needs "path" and "name"', "request")
    if target["kind"] == "hf" and not target.get("path"):
        raise DriverError('an hf target needs "path"', "request")
    checks = request.get("checks", list(CHECK_IDS))
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise DriverError(
            "unknown check(s) %s; known: %s" % (", ".join(map(str, unknown)), ", ".join(CHECK_IDS)),
            "request",
        )
    request["checks"] = checks
    lora = request.get("lora")
    if lora is not None:
        if not isinstance(lora, dict) or not lora.get("targets") or "r" not in lora:
            raise DriverError(
                'lora needs {"r": .., "alpha": .., "targets": [..]}', "request"
            )
        lora.setdefault("alpha", 2 * int(lora["r"]))
    for key, kind in (("seed", int), ("steps", int), ("learning_rate", (int, float))):
        if key in request and (not isinstance(request[key], kind) or isinstance(request[key], bool)):
            raise DriverError("%s must be a number" % key, "request")
    return request


def resolve_device(name):
    try:
        device = torch.device(name)
    except (RuntimeError, TypeError) as e:
        raise DriverError("device %r: %s" % (name, first_line(e)), "request")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise DriverError(
                "device %s: this torch (%s) sees no CUDA device" % (name, torch.__version__)
            )
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise DriverError(
                "device %s: only %d CUDA device(s)" % (name, torch.cuda.device_count())
            )
    elif device.type != "cpu":
        raise DriverError("device %s: only cpu and cuda[:N] are supported" % name, "request")
    return device


def make_subject(request):
    target = request["target"]
    if target["kind"] == "hf":
        subject = HfSubject(target["path"])
    else:
        subject = FileSubject(target["path"], target["name"])
    subject.lora = request.get("lora")
    return subject


def package_version(name):
    try:
        from importlib import metadata

        return metadata.version(name)
    except Exception:
        return None


def configure_determinism():
    """Same seed, same numbers on CPU: deterministic kernels where torch has them (warnings
    only where it has none, so no model is refused)."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    try:
        torch.use_deterministic_algorithms(True, warn_only=True)
    except Exception:
        pass


def start(request, events):
    """Loads the target, builds it once (the start-up time), says hello; returns the Run."""
    configure_determinism()
    device = resolve_device(request.get("device", "cpu"))
    request["device"] = str(device)
    subject = make_subject(request)
    seed_all(int(request.get("seed", 0)))
    try:
        model = subject.build()
    except DriverError:
        raise
    except (Exception, SystemExit) as e:
        raise user_code_error("%s: build()" % subject.label, e)
    parameters = sum(p.numel() for p in model.parameters())
    # A model that outlives this reference is kept by the user's object: every check would get
    # that same model, so it is put back after each one.
    kept = weakref.ref(model)
    del model
    gc.collect()
    shared = kept()
    snapshot = None
    if shared is not None:
        state = {k: v.detach().clone() for k, v in shared.state_dict().items()}
        snapshot = (shared, state, shared.training)
        del shared
    startup = time.perf_counter() - START
    events.emit(
        {
            "event": "hello",
            "contract": CONTRACT,
            "python": "%d.%d.%d" % sys.version_info[:3],
            "torch": torch.__version__.split("+")[0],
            "transformers": package_version("transformers"),
            "peft": package_version("peft"),
            "device": str(device),
            "model": subject.label,
            "task": subject.task,
            "labels": subject.labels,
            "parameters": int(parameters),
            "startup_s": round(startup, 3),
        }
    )
    run = Run(subject, request, events)
    run.shared = snapshot
    return run


def run_all(request, events):
    """Start-up, then one event per requested check, then done (raises DriverError at start-up)."""
    run = start(request, events)
    for check in request["checks"]:
        events.emit(run_check(run, check))
    events.emit({"event": "done"})


def import_torch():
    """Imports torch into this module; the error's first line when it cannot be imported."""
    global torch, F
    try:
        import torch as torch_module
        import torch.nn.functional as functional
    except Exception as e:  # ImportError, or OSError for a CUDA build without its libraries
        return "%s: %s" % (type(e).__name__, first_line(e))
    torch, F = torch_module, functional
    return None


def request_nonce(text):
    """The request's nonce (echoed on every event), or None when there is none to read."""
    try:
        nonce = json.loads(text).get("nonce")
    except (ValueError, AttributeError):
        return None
    return nonce if isinstance(nonce, str) else None


def main():
    # stdout carries only our JSON lines: fd 1 (and sys.stdout) go to stderr for everything
    # else, the user's prints and C libraries' included; we write to a duplicate of the old fd 1
    # (not inherited by the processes the user's code starts).
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    text = sys.stdin.read()
    events = Events(out, request_nonce(text))
    # Before torch: the CLI tells a Python that cannot import torch from a program that is not
    # a Python at all (which never says this).
    events.emit({"event": "started", "python": "%d.%d.%d" % sys.version_info[:3]})
    try:
        error = import_torch()
        if error is not None:
            raise DriverError(
                "`import torch` failed in %s (%s); install PyTorch there" % (sys.executable, error),
                "no_torch",
            )
        request = parse_request(text)
        run_all(request, events)
    except DriverError as e:
        sys.stderr.write("mldebug torch driver: %s\n" % e)
        events.emit(
            {"event": "fatal", "kind": e.kind, "message": str(e), "traceback": e.traceback}
        )
        sys.exit(e.code)
    out.flush()


if __name__ == "__main__":
    main()
else:  # imported (the tests, the benchmark): torch is needed at once
    import_torch()
