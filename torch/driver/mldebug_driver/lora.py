"""LoRA (`--lora`): the model wrapped with peft's get_peft_model, and what wrapping found
(grad-flow's `lora`: the modules matched, the adapter parameters, or peft's refusal)."""

import sys

import torch

from .errors import DriverError, first_line

# grad-flow with LoRA: at most this many distinct nn.Linear leaf names offered as targets.
LINEAR_NAMES_SHOWN = 12


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
