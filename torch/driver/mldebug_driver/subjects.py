"""The model under test behind one protocol (build, batch, loss, task, labels): FILE.py:NAME,
the user's protocol object imported by path, or hf:DIR_OR_CONFIG_JSON, a transformers causal LM
with random weights and a synthetic batch."""

import importlib.util
import os
import sys

import torch

from .errors import DriverError, first_line, user_code_error
from .lora import wrap_lora
from .rng import compiler_determinism
from .tensors import IGNORE_INDEX, default_loss, to_device

# hf: targets: the synthetic batch (rows x tokens), small enough for `check all` on a
# 5M-parameter GPT-2 to finish in seconds on two CPU cores, and the alphabet its tokens use.
HF_ROWS = 4
HF_TOKENS = 32
HF_ALPHABET = 48
# hf: rows after the first are right-padded by this many more tokens each.
HF_PAD_STEP = 4


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
        # The user's code may have imported torch's compiler (`torch.compile`) just now.
        compiler_determinism()
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
