"""Tensors as the protocol hands them over: model outputs (a tensor, a tuple, a dict, an HF
ModelOutput) and their logits, inputs (a tensor, a tuple, a dict) moved, called and changed, and
the protocol's default loss."""

import torch
import torch.nn.functional as F

IGNORE_INDEX = -100


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
