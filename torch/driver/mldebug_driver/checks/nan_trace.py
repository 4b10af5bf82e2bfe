"""nan-trace: NAN_TRACE_STEPS steps of plain SGD with every leaf module's output, the inputs,
the output and the loss recorded as frames, then the gradients and parameters scanned; the
first non-finite frame is the culprit, with the frames before it."""

import math

import torch

from ..frames import FrameRecorder, scan
from ..tensors import call, float_inputs, logits_of

# nan-trace: training steps traced, and frames reported before the culprit (a ring of 21).
NAN_TRACE_STEPS = 5
FRAMES_BEFORE = 20


def model_dtype(model):
    for p in model.parameters():
        if p.is_floating_point():
            return p.dtype
    return torch.get_default_dtype()


def check_nan_trace(run):
    model, inputs, targets = run.fresh(run.seed)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=run.learning_rate) if params else None
    named_params = list(model.named_parameters())
    named_buffers = list(model.named_buffers())
    buffer_names = {n for n, _ in named_buffers}
    recorder = FrameRecorder(model)
    culprit, max_abs = None, 0.0
    try:
        for step in range(NAN_TRACE_STEPS):
            for name, t in float_inputs(inputs):
                recorder.record(name, "input", t)
            output = call(model, inputs)
            recorder.record("output", "output", logits_of(output))
            loss = run.subject.loss(output, targets)
            recorder.record("loss", "loss", loss)
            frames = recorder.flush()
            finite_max = [f["abs_max"] for f in frames if math.isfinite(f["abs_max"])]
            max_abs = max([max_abs] + finite_max)
            bad = next((i for i, f in enumerate(frames) if f["non_finite"]), None)
            if bad is not None:
                culprit = {
                    "step": step,
                    "frame": frames[bad],
                    "before": frames[max(0, bad - FRAMES_BEFORE):bad],
                    "scanned": None,
                }
                break
            if optimizer is None or not loss.requires_grad:
                run.progress("nan-trace", step + 1, NAN_TRACE_STEPS, float(loss.detach().float()))
                continue
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            found = scan([(n, p.grad) for n, p in named_params], "gradient")
            if found is None:
                optimizer.step()
                found = scan(
                    [(n, p.detach()) for n, p in named_params] + named_buffers,
                    "parameter",
                    buffer_names,
                )
            if found is not None:
                label, frame = found
                culprit = {
                    "step": step,
                    "frame": frame,
                    "before": frames[-FRAMES_BEFORE:],
                    "scanned": label,
                }
                break
            run.progress("nan-trace", step + 1, NAN_TRACE_STEPS, float(loss.detach().float()))
    finally:
        recorder.remove()
    dtype = model_dtype(model)
    return "measurement", {
        "steps": NAN_TRACE_STEPS,
        "culprit": culprit,
        "max_abs": max_abs,
        "traced_modules": recorder.traced,
        "dtype": str(dtype).replace("torch.", ""),
        "dtype_max": float(torch.finfo(dtype).max),
    }
