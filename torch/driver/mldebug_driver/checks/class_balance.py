"""class-balance: the batch's targets, flat (-100 kept), for Rust to count; no model is built."""

from ..rng import seed_all


def check_class_balance(run):
    seed_all(run.seed)
    _, targets = run.subject.batch(run.seed, run.device)
    if targets.is_floating_point():
        return "measurement", {"targets_float": True, "targets": []}
    return "measurement", {
        "targets_float": False,
        "targets": targets.reshape(-1).long().cpu().tolist(),
    }
