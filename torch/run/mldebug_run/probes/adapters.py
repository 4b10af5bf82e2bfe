"""Adapter configurations (peft): the configs the program built, and whether the models it
trains hold adapter modules, in an `adapters` record at each optimizer's first step (and at a
later step of optimizer 0 when configs were built since its last record): a program that
pretrains a base first and builds its adapter config afterwards is seen at its second
optimizer's first step.

A config is seen when it is constructed: once `peft` has been imported (the bootstrap's import
watcher runs `_peft_ready` after peft's `__init__`, or at install time when it is already
imported), `peft.config.PeftConfigMixin.__new__` is replaced by one that makes
the object as before and remembers it. Every config class (LoraConfig, IA3Config, ...) derives
from that base, and a copy (`copy.deepcopy`) is made through it too. At most CONFIGS_KEPT are
remembered, by weak reference where the class allows one. An adapter module is a module of a
class derived from peft's `BaseTunerLayer` (a LoRA, IA3, LoHa... layer).

What it never does: import peft (or anything the program does not import itself), change a
config or a model, or hold a model.
"""

import sys
import weakref

from .. import state as _state
from ..state import probe
from ..where import where

CONFIGS_KEPT = 8  # configs remembered: a program builds one or two
CONFIGS_LISTED = 4  # distinct configs in the record
_configs = []  # (weakref or object, where)
_patched = False
_recorded = 0  # len(_configs) at the last record


@probe("adapters")
def install(watch):
    """Patch peft once it is imported (now, if it is), with the bootstrap's import watcher."""
    watch("peft", _peft_ready)


@probe("adapters")
def _peft_ready():
    global _patched
    config = sys.modules.get("peft.config")
    base = getattr(config, "PeftConfigMixin", None)
    if base is None or _patched or "__new__" in vars(base):
        return
    _patched = True

    original = base.__new__  # object's, unless a base of peft's defines one

    def __new__(cls, *args, **kwargs):
        obj = object.__new__(cls) if original is object.__new__ else original(cls, *args, **kwargs)
        _constructed(obj)
        return obj

    __new__._mldebug_wrapped = True
    base.__new__ = staticmethod(__new__)


@probe("adapters")
def _constructed(config):
    if len(_configs) >= CONFIGS_KEPT:
        return
    try:
        ref = weakref.ref(config)
    except TypeError:
        ref = None
    _configs.append((ref, config if ref is None else None, where(2)))


def _summary(config, site):
    targets = getattr(config, "target_modules", None)
    if isinstance(targets, (list, tuple, set, frozenset)):
        targets = sorted(str(t) for t in targets)
    elif not isinstance(targets, str):
        targets = None
    kind = getattr(config, "peft_type", None)
    kind = getattr(kind, "value", kind)
    r = getattr(config, "r", None)
    return {"class": type(config).__name__, "peft_type": kind if isinstance(kind, str) else None,
            "r": r if isinstance(r, int) and not isinstance(r, bool) else None,
            "target_modules": targets, "where": site}


def is_adapter(module):
    for cls in type(module).__mro__:
        if cls.__name__ == "BaseTunerLayer" and cls.__module__.startswith("peft."):
            return True
    return False


@probe("adapters")
def maybe_write(entry):
    """After a step of `entry`: the record at its first step, or at optimizer 0's step when
    configs were built since the last record. Costs a comparison on every other step."""
    if not _configs:
        return
    if entry.steps == 1 or (entry.index == 0 and len(_configs) != _recorded):
        _write_record(entry)


def _write_record(entry):
    """The `adapters` record: `stepped` says which models hold tensors of the optimizer that
    just stepped (`entry`), `step` is that optimizer's own step count."""
    global _recorded
    st = _state.STATE
    _recorded = len(_configs)
    configs, seen = [], set()
    for ref, obj, site in _configs:
        config = obj if ref is None else ref()
        if config is None:
            continue
        summary = _summary(config, site)
        key = (summary["class"], summary["r"], str(summary["target_modules"]))
        if key not in seen and len(configs) < CONFIGS_LISTED:
            seen.add(key)
            configs.append(summary)
    held = set()
    for group in getattr(entry.ref(), "param_groups", None) or ():
        held.update(id(t) for t in group.get("params", ()))
    models = []
    for model in st.model_list:
        inner = model.inner()
        if inner is None:
            continue
        params = list(inner.parameters())
        models.append({"model": model.index,
                       "adapter_modules": sum(1 for m in inner.modules() if is_adapter(m)),
                       "parameters": sum(p.numel() for p in params),
                       "trainable": sum(p.numel() for p in params if p.requires_grad),
                       "stepped": any(id(p) in held for p in params)})
    st.emit("adapters", step=entry.steps, optimizer=entry.index,
            configs=configs, configs_built=len(_configs), models=models)
