"""label-mask: what the loss does with -100 targets. The loss on every target masked (does it
stay finite, do gradients move?) and on noise added to the logits at masked positions (does a
masked position reach the loss?), beside the targets, inputs and class count for Rust to read
shifted, unmasked or out-of-range labels from."""

import torch

from ..errors import first_line
from ..tensors import IGNORE_INDEX, call, logits_of, primary_input, with_logits

# label-mask: std of the noise added to logits at masked positions (candle: PERTURBATION_SCALE).
PERTURBATION_SCALE = 10.0


def grads_move(loss, params):
    """Some parameter gets a finite, non-zero gradient from `loss`."""
    if not loss.requires_grad or not params:
        return False
    grads = torch.autograd.grad(loss, params, allow_unused=True)
    for g in grads:
        if g is None:
            continue
        if bool(torch.isfinite(g).all()) and bool((g != 0).any()):
            return True
    return False


def probe_masks(targets, in_model):
    """(targets with the probe's positions set to -100, the mask of logits to perturb): the
    batch's own -100 positions, or every other position when it masks none or all."""
    flat = targets.reshape(-1)
    masked = flat == IGNORE_INDEX
    if bool(masked.any()) and bool((~masked).any()):
        rows = masked
    else:
        rows = torch.arange(flat.numel(), device=flat.device) % 2 == 1
    probe = torch.where(rows, torch.full_like(flat, IGNORE_INDEX), flat).reshape(targets.shape)
    rows = rows.reshape(targets.shape)
    if in_model and targets.dim() >= 1:
        # The logit at t is scored against label t + 1.
        shifted = torch.zeros_like(rows)
        shifted[..., :-1] = rows[..., 1:]
        rows = shifted
    return probe, rows


def masked_logits_probe(run, output, targets):
    """Loss before and after N(0, 10) noise on the logits whose targets the probe masks."""
    logits = logits_of(output).detach()
    classes = logits.shape[-1] if logits.dim() else 1
    if targets.is_floating_point() or targets.numel() < 2:
        return None
    if logits.numel() != targets.numel() * classes:
        return None
    probe, rows = probe_masks(targets, run.subject.labels == "in_model")
    g = torch.Generator().manual_seed(run.seed)
    noise = torch.randn(tuple(logits.shape), generator=g) * PERTURBATION_SCALE
    mask = rows.reshape(-1, 1).to(torch.float32).cpu()
    delta = (noise.reshape(-1, classes) * mask).reshape(logits.shape)
    delta = delta.to(device=logits.device, dtype=logits.dtype)
    if not bool((delta != 0).any()):
        return None
    try:
        with torch.no_grad():
            before = run.subject.loss(with_logits(output, logits), probe)
            after = run.subject.loss(with_logits(output, logits + delta), probe)
        return {"before": float(before.float()), "after": float(after.float())}
    except Exception:
        return None


def check_label_mask(run):
    model, inputs, targets = run.fresh(run.seed)
    if targets.is_floating_point():
        return "skipped", "the targets are floats (values, not class ids): there is no -100 mask"
    model.eval()
    _, primary = primary_input(inputs)
    same = (
        not primary.is_floating_point()
        and tuple(primary.shape) == tuple(targets.shape)
    )
    measurement = {
        "targets": targets.reshape(-1).long().cpu().tolist(),
        "inputs": primary.reshape(-1).long().cpu().tolist() if same else None,
        "seq_len": int(targets.shape[-1]) if targets.dim() >= 2 else None,
    }
    output = call(model, inputs)
    params = [p for p in model.parameters() if p.requires_grad]
    logits = logits_of(output)
    classes = int(logits.shape[-1]) if logits.dim() else 1
    measurement["classes"] = classes
    ignored = targets == IGNORE_INDEX
    kept = targets[~ignored]
    in_range = bool(((kept >= 0) & (kept < classes)).all())
    # The loss first on the batch's targets with every -100 made class 0: if it raises on class
    # ids alone, the user's loss (not the mask) is broken, and the check is an error, not a
    # verdict on the mask. A loss that raises only on -100 is the all-masked probe's finding;
    # targets outside [0, classes) are the labels' own fault: Rust fails both.
    try:
        run.subject.loss(output, torch.where(ignored, torch.zeros_like(targets), targets))
    except Exception:
        if in_range:
            raise
    try:
        loss = run.subject.loss(output, torch.full_like(targets, IGNORE_INDEX))
        measurement["all_masked"] = {
            "loss": float(loss.detach().float()),
            "grads_move": grads_move(loss, params),
        }
    except Exception as e:
        measurement["all_masked"] = {"error": "%s: %s" % (type(e).__name__, first_line(e))}
    measurement["masked_logits"] = masked_logits_probe(run, output, targets)
    return "measurement", measurement
