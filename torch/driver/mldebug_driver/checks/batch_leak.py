"""batch-leak: does one sample's output depend on another's (change the last sample, watch the
others), and for a causal LM does a position see the future (change every token after T/2 - 1,
watch the logits up to it)?"""

import math

import torch

from ..tensors import call, logits_of, primary_input, replace_primary


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
