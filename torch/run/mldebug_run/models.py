"""Root modules: which module calls are "the model", and the `model` record of each.

A root is a module whose forward was called from code that is not itself inside a module's
forward. It counts as a model only when it holds at least one parameter: a loss module
(`nn.CrossEntropyLoss()`), a parameter-free transform or a DataParallel replica is not one.
Forwards run by autograd during a backward (activation checkpointing recomputes) are never
roots. A forward of a model whose parameters are on the meta device (built there, run for an
output shape before it is materialised) is not yet the model's. A DistributedDataParallel,
DataParallel, FSDP or `torch.compile` wrapper is the root; the record describes the module it
wraps and names the wrapper.

What it never does: hold a strong reference to a module, or change one.
"""

import json
import sys
import warnings
import weakref

from . import state as _state
from .where import where

WRAPPERS = ("DistributedDataParallel", "DataParallel", "FullyShardedDataParallel",
            "OptimizedModule")
CAUSAL_LM_SUFFIXES = ("ForCausalLM", "LMHeadModel")
# The largest transformers config carried in the `model` record, serialised: published configs
# are a few kilobytes; one that is larger (a classifier's id2label of thousands of classes)
# would make one trace line as large as the rest of the trace, for fields no estimate reads.
CONFIG_MAX_BYTES = 64 * 1024
# How deep a config's nested objects are followed (a multimodal config nests its text and
# vision configs two levels down); anything deeper is left out.
CONFIG_MAX_DEPTH = 8


def unwrap(module):
    """(the module a wrapper holds, the wrapper's class name or None)."""
    name = type(module).__name__
    if name in WRAPPERS:
        inner = getattr(module, "module", None) or getattr(module, "_orig_mod", None)
        if inner is not None:
            return inner, name
    return module, None


def base_model(module):
    """The transformers model under a peft wrapper, else the module itself."""
    if type(module).__module__.startswith("peft.") and hasattr(module, "get_base_model"):
        try:
            return module.get_base_model()
        except Exception:
            return module
    return module


def shifts_labels(module):
    base = base_model(module)
    for cls in type(base).__mro__:
        if cls.__module__.startswith("transformers.") and cls.__name__.endswith(CAUSAL_LM_SUFFIXES):
            return True
    return False


def has_parameters(module):
    for _ in module.parameters():
        return True
    return False


def lookup(module):
    """The ModelEntry of a root module, registering it (and writing its `model` record) at its
    first forward; None for a root that is not a model."""
    st = _state.STATE
    key = id(module)
    entry = st.models.get(key)
    if entry is not None and entry.ref() is module:
        return entry
    ref = st.not_models.get(key)
    if ref is not None and ref() is module:
        return None
    if getattr(module, "_is_replica", False) or not has_parameters(module):
        st.not_models[key] = weakref.ref(module)
        return None
    inner, wrapper = unwrap(module)
    if device_of(inner) == "meta":
        return None  # built on the meta device, run for a shape: the model once it holds data

    entry = _state.ModelEntry(len(st.model_list), weakref.ref(module), weakref.ref(inner),
                              shifts_labels(inner))
    st.models[key] = entry
    st.model_list.append(entry)
    _write_model(entry, module, inner, wrapper)
    return entry


def device_of(module):
    for p in module.parameters():
        return str(p.device)
    return None


def first_device():
    """The device of the first live model's first parameter (`cpu`, `cuda:0`), or None. Read
    every step: the submodule that holds that parameter and its name are found once, and the
    parameter is looked up by name each time (a `to()` that replaces it is seen)."""
    for entry in _state.STATE.model_list:
        inner = entry.inner()
        if inner is None:
            continue
        where_ = getattr(entry, "first_parameter", None)
        owner = where_[0]() if where_ is not None else None
        try:
            p = owner._parameters[where_[1]] if owner is not None else None
        except Exception:  # gone (a parameter deleted), or a scripted module's own mapping
            p = None
        if p is None:
            entry.first_parameter, p = _first_parameter(inner)
        if p is not None:
            return str(p.device)
    return None


def _first_parameter(module):
    """((weakref to the submodule, name), parameter) of `module.parameters()`'s first."""
    for m in module.modules():
        for name, p in m._parameters.items():
            if p is not None:
                return (weakref.ref(m), name), p
    return None, None


def _is_lazy(p):
    torch = sys.modules["torch"]
    return isinstance(p, torch.nn.parameter.UninitializedTensorMixin)


def _write_model(entry, module, inner, wrapper):
    st = _state.STATE
    torch = sys.modules["torch"]
    st.open_trace(device_of(inner))
    params = [p for p in inner.parameters() if not _is_lazy(p)]
    dropout = batchnorm = lora = 0
    for m in inner.modules():
        if isinstance(m, torch.nn.modules.dropout._DropoutNd) and m.p > 0:
            dropout += 1
        elif isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            batchnorm += 1
        elif type(m).__module__.startswith("peft.tuners.lora") and hasattr(m, "lora_A"):
            lora += 1
    base = base_model(inner)
    config = getattr(base, "config", None)
    hf = _config_dict(config)
    st.emit("model", step=st.step, model=entry.index, **{"class": type(inner).__name__},
            module=type(inner).__module__, where=where(2), shifts_labels=entry.shifts_labels,
            parameters=sum(p.numel() for p in params),
            trainable=sum(p.numel() for p in params if p.requires_grad),
            tensors=len(params), trainable_tensors=sum(1 for p in params if p.requires_grad),
            dropout=dropout, batchnorm=batchnorm, lora=lora, wrapper=wrapper,
            training=bool(module.training), device=device_of(inner),
            pad_token_id=_int_or_none(getattr(config, "pad_token_id", None)),
            dtype=_main_dtype(params), config=hf,
            attn_implementation=_attention(config) if hf is not None else None,
            gradient_checkpointing=_checkpointing(base) if hf is not None else None,
            **_lora_config(inner))


def _int_or_none(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str_or_none(value):
    return value if isinstance(value, str) else None


def _main_dtype(params):
    """The dtype holding most of the parameters' elements (`float32`, `bfloat16`), or None."""
    counts = {}
    for p in params:
        counts[p.dtype] = counts.get(p.dtype, 0) + p.numel()
    if not counts:
        return None
    return str(max(counts, key=counts.get)).replace("torch.", "")


def _plain_json(value, depth):
    """`value` keeping only what JSON holds (numbers, strings, booleans, null, lists and
    string-keyed objects of those); `_DROP` for anything else or anything deeper than
    CONFIG_MAX_DEPTH. A list with one element that cannot be kept is dropped whole."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if depth >= CONFIG_MAX_DEPTH:
        return _DROP
    if isinstance(value, (list, tuple)):
        items = [_plain_json(v, depth + 1) for v in value]
        return _DROP if any(v is _DROP for v in items) else items
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if isinstance(k, (str, int)) and not isinstance(k, bool):
                v = _plain_json(v, depth + 1)
                if v is not _DROP:
                    out[str(k)] = v
        return out
    return _DROP


_DROP = object()


def _config_dict(config):
    """A transformers config as a plain JSON object (`config.to_dict()`), or None: no config,
    not a transformers one, larger than CONFIG_MAX_BYTES once serialised, or any error."""
    if config is None or not type(config).__module__.startswith("transformers."):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the program's output stays its own
            d = _plain_json(config.to_dict(), 0)
        if not isinstance(d, dict):
            return None
        if len(json.dumps(d).encode("utf-8")) > CONFIG_MAX_BYTES:
            return None
        return d
    except Exception:
        return None


def _attention(config):
    """The attention kernel transformers chose (`eager`, `sdpa`, `flash_attention_2`), or None."""
    try:
        return _str_or_none(getattr(config, "_attn_implementation", None))
    except Exception:
        return None


def _checkpointing(base):
    """Whether transformers' activation checkpointing is on in any of the model's modules (read
    from the flag `gradient_checkpointing_enable` sets, not from the deprecated property that
    warns)."""
    try:
        return any(getattr(m, "gradient_checkpointing", False) is True for m in base.modules())
    except Exception:
        return None


def _lora_config(inner):
    """`lora_rank` and `lora_targets` of a peft LoRA wrapper's first adapter, else None each."""
    out = {"lora_rank": None, "lora_targets": None}
    try:
        configs = getattr(inner, "peft_config", None)
        if not isinstance(configs, dict) or not configs:
            return out
        cfg = next(iter(configs.values()))
        out["lora_rank"] = _int_or_none(getattr(cfg, "r", None))
        targets = getattr(cfg, "target_modules", None)
        if isinstance(targets, str):
            out["lora_targets"] = targets
        elif isinstance(targets, (list, tuple, set, frozenset)):
            out["lora_targets"] = sorted(str(t) for t in targets)
    except Exception:
        pass
    return out


def names(entry):
    """id(submodule) and id(parameter) -> dotted name within the wrapped module."""
    if entry.names is None:
        inner = entry.inner()
        table = {}
        if inner is not None:
            for name, m in inner.named_modules():
                table.setdefault(id(m), name)
            for name, p in inner.named_parameters():
                table.setdefault(id(p), name)
        entry.names = table
    return entry.names


def name_of(obj):
    """The dotted name of a submodule or parameter in the first model that has it, or None."""
    for entry in _state.STATE.model_list:
        if entry.ref() is None:
            continue
        name = names(entry).get(id(obj))
        if name is not None:
            return name
    return None


def model_parameters():
    """id(parameter) of every parameter of every live model seen so far."""
    ids = set()
    for entry in _state.STATE.model_list:
        inner = entry.inner()
        if inner is not None:
            ids.update(id(p) for p in inner.parameters())
    return ids
