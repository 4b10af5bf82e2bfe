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
    only where it has none, so no model is refused)."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    try:
        torch.use_deterministic_algorithms(True, warn_only=True)
    except Exception:
        pass
