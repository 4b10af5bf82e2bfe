"""The frame recorder of nan-trace: forward hooks on every leaf module, and the scan of
gradients, parameters and buffers, writing [abs-min, abs-max] rows on the device and reading
them back once a step (CONTRACT.md, nan-trace). The benchmark torch/bench/nan_trace_overhead.py
times the same FrameRecorder."""

import math

import torch

from .tensors import first_float_tensor


def stat2(t):
    """[abs-min, abs-max] of `t` as one device tensor (no host sync). A NaN propagates to both
    and an infinity to abs-max, so abs-max is finite exactly when every element is: the
    non-finite count is computed only for the rows that need it, after the read-back.
    (aminmax of |x| is 7x cheaper on CPU than vector_norm with ord +-inf, and than counting
    isfinite on every output.)"""
    return torch.stack(torch.aminmax(t.detach().abs()))


def non_finite_count(t):
    return int((~torch.isfinite(t.detach())).sum())


class FrameRecorder:
    """Forward hooks on every leaf module writing each output's abs-min, abs-max and finite count
    into device tensors, read back once per step (`flush`): no `.item()` or host sync inside the
    step. Frames come in execution order; `flush` returns them as contract FRAMEs.

    Usage (the benchmark uses it the same way):

        rec = FrameRecorder(model)
        out = model(x); rec.record("output", "output", out); frames = rec.flush()
        rec.remove()
    """

    def __init__(self, model):
        self.meta = []  # (module, kind, shape) per frame of this step
        self.rows = []  # device tensors [2] per frame of this step
        self.tensors = []  # the recorded tensors, until flush (to count a non-finite row)
        self.handles = []
        self.traced = 0
        self.last = None  # the tensor of the last row, not kept past flush()
        for name, module in model.named_modules():
            if next(module.children(), None) is not None:
                continue
            hook = self._hook(name or "model", type(module).__name__)
            self.handles.append(module.register_forward_hook(hook))
            self.traced += 1

    def _hook(self, name, kind):
        def hook(module, args, output):
            t = first_float_tensor(output)
            if t is not None:
                self.record(name, kind, t)

        return hook

    def record(self, module, kind, t):
        if t.numel() == 0:
            return
        self.meta.append((module, kind, list(t.shape)))
        self.tensors.append(t)
        # The model output is usually the last layer's output itself: its row is reused.
        if self.rows and t is self.last:
            self.rows.append(self.rows[-1])
            return
        self.last = t
        self.rows.append(stat2(t))

    def flush(self):
        """The frames recorded since the last flush, read back in one transfer."""
        meta, rows, tensors = self.meta, self.rows, self.tensors
        self.meta, self.rows, self.tensors, self.last = [], [], [], None
        if not rows:
            return []
        values = torch.stack(rows).double().cpu().tolist()
        return [
            {
                "module": module,
                "kind": kind,
                "shape": shape,
                "abs_min": v[0],
                "abs_max": v[1],
                "non_finite": 0 if math.isfinite(v[1]) else non_finite_count(t),
            }
            for (module, kind, shape), v, t in zip(meta, values, tensors)
        ]

    def remove(self):
        for h in self.handles:
            h.remove()
        self.handles = []


def scan(named, what, buffers=()):
    """The first (name, frame) whose tensor holds a NaN or an infinity, in the order given; one
    read-back for all of them."""
    named = [(n, t) for n, t in named if t is not None and t.is_floating_point() and t.numel()]
    if not named:
        return None
    values = torch.stack([stat2(t) for _, t in named]).double().cpu().tolist()
    for (name, t), v in zip(named, values):
        non_finite = 0 if math.isfinite(v[1]) else non_finite_count(t)
        if non_finite:
            kind = "buffer" if name in buffers else what
            label = "%s of %s" % (kind, name)
            frame = {
                "module": label,
                "kind": kind,
                "shape": list(t.shape),
                "abs_min": v[0],
                "abs_max": v[1],
                "non_finite": non_finite,
            }
            return label, frame
    return None
