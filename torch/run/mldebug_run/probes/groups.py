"""What kinds of parameters each optimizer parameter group holds, for the `optimizer` record:
biases (1-D parameters whose name ends in `bias`, outside a normalisation layer), the weights
and biases of normalisation layers (LayerNorm, RMSNorm, GroupNorm, BatchNorm, InstanceNorm,
and modules of other libraries whose class name ends in one of those: `LlamaRMSNorm`,
`T5LayerNorm`) and embedding tables (`nn.Embedding` / `nn.EmbeddingBag` weights), each as a
count of tensors and of elements. The rest (weight matrices, convolution kernels) and tensors
of no model seen are not counted.

Read once, when the `optimizer` record is written (the optimizer's first step), from the root
models seen by then.

What it never does: hold a module or a parameter, or change either.
"""

import re
import sys

from .. import state as _state
from ..state import probe

KINDS = ("norm", "embedding", "bias")
NORM_CLASS = re.compile(r"(Layer|RMS|Group|Batch|Instance)Norm(\d[dD])?$")


def _kind_of_parameters():
    """id(parameter) -> its kind, over the models seen."""
    torch = sys.modules["torch"]
    nn = torch.nn
    norms = tuple(c for c in (getattr(nn, n, None) for n in (
        "LayerNorm", "RMSNorm", "GroupNorm", "LocalResponseNorm")) if c is not None)
    norms += (nn.modules.batchnorm._NormBase,) if hasattr(nn.modules, "batchnorm") else ()
    embeddings = (nn.Embedding, nn.EmbeddingBag)
    kinds = {}
    for entry in _state.STATE.model_list:
        inner = entry.inner()
        if inner is None:
            continue
        for module in inner.modules():
            if isinstance(module, norms) or NORM_CLASS.search(type(module).__name__):
                kind = "norm"
            elif isinstance(module, embeddings):
                kind = "embedding"
            else:
                continue
            for name, p in module.named_parameters(recurse=False):
                if kind == "norm" or name == "weight":
                    kinds.setdefault(id(p), kind)
        for name, p in inner.named_parameters():
            if p.dim() == 1 and name.rsplit(".", 1)[-1].endswith("bias"):
                kinds.setdefault(id(p), "bias")
    return kinds


@probe("groups")
def annotate(groups, opt):
    """Adds `kinds` (and Adam's `decoupled_weight_decay`) to each group of an `optimizer`
    record, in the order of `opt.param_groups`."""
    kinds = _kind_of_parameters()
    for out, group in zip(groups, opt.param_groups):
        counts = {}
        for p in group["params"]:
            kind = kinds.get(id(p))
            if kind is not None:
                c = counts.setdefault(kind, {"tensors": 0, "numel": 0})
                c["tensors"] += 1
                c["numel"] += p.numel()
        out["kinds"] = {k: counts[k] for k in KINDS if k in counts}
        decoupled = group.get("decoupled_weight_decay")
        if isinstance(decoupled, bool):
            out["decoupled_weight_decay"] = decoupled
