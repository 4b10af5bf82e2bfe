"""Seeds and RNG states: every generator a check may draw from (python `random`, numpy when
the user's code imported it, torch CPU and CUDA) seeded before a build and put back after a
check, and deterministic kernels so the same seed gives the same numbers on CPU."""

import os
import random
import sys

import torch


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


def configure_determinism():
    """Same seed, same numbers on CPU: deterministic kernels where torch has them (warnings
    only where it has none, so no model is refused).

    `set_deterministic_debug_mode("warn")` sets the same switch as
    `use_deterministic_algorithms(True, warn_only=True)` without importing torch's compiler
    (`torch._inductor.config`, about 2 s of every start here) to set its flag; that flag is
    set by `compiler_determinism` once the user's code has imported the compiler."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    try:
        torch.set_deterministic_debug_mode("warn")
    except Exception:
        pass
    compiler_determinism()


def compiler_determinism():
    """Deterministic code from torch's compiler, when the user's code has imported it (a model
    built with `torch.compile`): called at start and again after each `build()`."""
    config = sys.modules.get("torch._inductor.config")
    if config is not None:
        try:
            config.deterministic = torch.are_deterministic_algorithms_enabled()
        except Exception:
            pass
